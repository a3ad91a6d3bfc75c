"""Conformance: the official ACP Python SDK switches the model and the reasoning effort
mid-session through `session/set_config_option`, and the next model request carries them.

`tether acp --provider openai` against a local fake OpenAI server (`LocalHTTPServer`, real
HTTP): the daemon lists its models in the background (`GET /v1/models`), the SDK client
sees them arrive in a `config_option_update` (which it must parse: the reasoning option's
category is ACP's `thought_level`), picks one, and the request body shows it.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "providers"))
from local_http import LocalHTTPServer, Reply
from test_real_provider_turn import FAKE_KEY, text_chunks

if TYPE_CHECKING:
    import pytest

MODELS = [{"id": "m", "object": "model"}, {"id": "o3", "object": "model"}, {"id": "gpt-4.1", "object": "model"}]


async def latest_options(daemon: Any, session_id: str) -> dict[str, Any]:
    """The options of the session's latest `config_option_update`, as the SDK parsed them."""
    while True:
        found = [u for u in daemon.client.updates_for(session_id) if u.session_update == "config_option_update"]
        if found:
            return {o.id: o for o in found[-1].config_options}
        await asyncio.sleep(0.02)


async def prompt(daemon: Any, session_id: str) -> None:
    import acp_sdk_harness as sdk  # the SDK, only in the tests that use it (see that module)
    from acp import text_block

    answer = await asyncio.wait_for(daemon.conn.prompt(session_id=session_id, prompt=[text_block("hi")]), sdk.WAIT)
    assert answer.stop_reason == "end_turn"


async def test_the_sdk_switches_the_model_and_reasoning_and_the_next_request_uses_them(
    daemon_env, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import acp_sdk_harness as sdk

    async with LocalHTTPServer() as server:
        server.models = MODELS
        server.queue(*(Reply(chunks=text_chunks("openai", "ok")) for _ in range(3)))
        monkeypatch.setattr(
            sdk,
            "daemon_argv",
            lambda: (
                sys.executable,
                "-m",
                "tether",
                "acp",
                "--provider",
                "openai",
                "--base-url",
                server.url + "/v1",
                "--model",
                "m",
            ),
        )
        env = {**daemon_env, "OPENAI_API_KEY": FAKE_KEY}
        async with sdk.tether_acp(env, workspace, tmp_path) as daemon:
            session = await asyncio.wait_for(daemon.conn.new_session(cwd=str(workspace)), sdk.WAIT)
            sid = session.session_id
            assert [o.value for o in {o.id: o for o in session.config_options or []}["model"].options] == ["m"]
            options = await asyncio.wait_for(latest_options(daemon, sid), sdk.WAIT)
            assert [o.value for o in options["model"].options] == ["m", "o3", "gpt-4.1"]
            await prompt(daemon, sid)

            answer = await asyncio.wait_for(
                daemon.conn.set_config_option(config_id="model", session_id=sid, value="o3"), sdk.WAIT
            )
            reasoning = {o.id: o for o in answer.config_options}["reasoning"]
            assert reasoning.category == "thought_level" and reasoning.current_value == "default"
            await prompt(daemon, sid)
            answer = await asyncio.wait_for(
                daemon.conn.set_config_option(config_id="reasoning", session_id=sid, value="low"), sdk.WAIT
            )
            assert {o.id: o.current_value for o in answer.config_options} == {
                "model": "o3",
                "reasoning": "low",
                "mode": "ask",
            }
            await prompt(daemon, sid)
            sdk.assert_sdk_understands_every_frame(daemon.wire)
    assert [(r.body["model"], r.body.get("reasoning_effort")) for r in server.requests] == [
        ("m", None),
        ("o3", None),
        ("o3", "low"),
    ]
