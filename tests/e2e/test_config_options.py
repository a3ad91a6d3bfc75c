"""ACP session config options over the real daemon (SPEC §3.36): the model picker and the
mode picker in `session/new|load|resume` answers, `session/set_config_option`,
`session/set_model`, and their updates.

The model is `tether serve --provider openai` against `LocalHTTPServer`, which records the
`"model"` field of every request: a choice shows in the NEXT request the daemon makes.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tether_client import ClientError

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "providers"))
from local_http import LocalHTTPServer, Reply, sse
from test_real_provider_turn import _OA_USAGE, FAKE_KEY, _oa, serve_command, text_chunks

ENV = {"OPENAI_API_KEY": FAKE_KEY, "TETHER_MODELS": "m,big-model"}


def option(options: list[dict[str, Any]], config_id: str) -> dict[str, Any]:
    (found,) = [o for o in options if o["id"] == config_id]
    return found


async def ask(session: Any) -> None:
    turn = session.prompt("hello")
    _ = [u async for u in turn]
    assert turn.stop_reason == "end_turn"


async def test_the_model_option_switches_the_next_request_and_set_model_does_too(spawn_daemon, workspace: Path) -> None:
    async with LocalHTTPServer() as server:
        server.queue(*(Reply(chunks=text_chunks("openai", "ok")) for _ in range(3)))
        daemon = await spawn_daemon(command=serve_command("openai", server), env=ENV)
        session = await daemon.client.new_session(workspace)
        options = session.info["configOptions"]
        model = option(options, "model")
        assert model["category"] == "model" and model["type"] == "select"
        assert model["currentValue"] == "m"
        assert [o["value"] for o in model["options"]] == ["m", "big-model"]
        mode = option(options, "mode")
        assert mode["category"] == "mode" and mode["currentValue"] == session.info["modes"]["currentModeId"]
        assert [o["value"] for o in mode["options"]] == [m["id"] for m in session.info["modes"]["availableModes"]]
        await ask(session)

        answer = await daemon.client.request(
            "session/set_config_option", {"sessionId": session.id, "configId": "model", "value": "big-model"}
        )
        assert option(answer["configOptions"], "model")["currentValue"] == "big-model"
        await ask(session)

        assert await daemon.client.request("session/set_model", {"sessionId": session.id, "modelId": "m"}) == {}
        await ask(session)
        updates = [u for u in session.updates if u["sessionUpdate"] == "config_option_update"]

    assert [r.body["model"] for r in server.requests] == ["m", "big-model", "m"]
    assert option(updates[-1]["configOptions"], "model")["currentValue"] == "m"


def run_command_call() -> list[bytes | float]:
    call = {
        "index": 0,
        "id": "call_run",
        "type": "function",
        "function": {"name": "run_command", "arguments": json.dumps({"command": "true"})},
    }
    return sse(
        _oa({"role": "assistant", "content": None}),
        _oa({"tool_calls": [call]}),
        _oa(finish="tool_calls"),
        _OA_USAGE,
        "[DONE]",
    )


async def test_a_running_turn_keeps_its_model_and_the_next_turn_uses_the_new_one(spawn_daemon, workspace: Path) -> None:
    asked, release = asyncio.Event(), asyncio.Event()

    async def on_request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.set()  # the turn waits for this answer, between its two model requests
        await release.wait()
        return {"outcome": {"outcome": "selected", "optionId": "reject_once"}}

    async with LocalHTTPServer() as server:
        server.queue(
            Reply(chunks=run_command_call()),
            Reply(chunks=text_chunks("openai", "ok")),
            Reply(chunks=text_chunks("openai", "ok")),
        )
        daemon = await spawn_daemon(command=serve_command("openai", server), env=ENV)
        daemon.client.peer.on_request = on_request
        session = await daemon.client.new_session(workspace)
        turn = session.prompt("run it")
        turn.start()
        await asyncio.wait_for(asked.wait(), 15)
        await daemon.client.request("session/set_model", {"sessionId": session.id, "modelId": "big-model"})
        release.set()
        await turn.wait()
        await ask(session)

    assert [r.body["model"] for r in server.requests] == ["m", "m", "big-model"]


async def test_bad_values_are_refused_naming_what_is_allowed(spawn_daemon, workspace: Path) -> None:
    daemon = await spawn_daemon(env={"TETHER_MODELS": "a,b"})
    session = await daemon.client.new_session(workspace)
    cases = [
        ("session/set_config_option", {"configId": "model", "value": "gpt-unknown"}, "'model'"),
        ("session/set_config_option", {"configId": "mode", "value": "yolo"}, "read-only, ask, auto-edit, full-auto"),
        ("session/set_config_option", {"configId": "temperature", "value": "1"}, "model, mode"),
        ("session/set_model", {"modelId": "c"}, "a, b"),
    ]
    for method, params, named in cases:
        with pytest.raises(ClientError) as refused:
            await daemon.client.request(method, {"sessionId": session.id, **params})
        assert refused.value.code == -32602 and named in refused.value.message


async def test_mode_by_option_sends_current_mode_update_and_set_mode_sends_the_option(
    spawn_daemon, workspace: Path
) -> None:
    daemon = await spawn_daemon()
    session = await daemon.client.new_session(workspace)
    answer = await daemon.client.request(
        "session/set_config_option", {"sessionId": session.id, "configId": "mode", "value": "read-only"}
    )
    assert option(answer["configOptions"], "mode")["currentValue"] == "read-only"
    await daemon.client.request("session/set_mode", {"sessionId": session.id, "modeId": "auto-edit"})
    await daemon.client.request("session/list", {})  # every update above is in before this answer
    changes = [u for u in session.updates if u["sessionUpdate"] != "available_commands_update"]
    assert [u["sessionUpdate"] for u in changes] == ["current_mode_update", "config_option_update"]
    assert changes[0]["currentModeId"] == "read-only"
    assert option(changes[1]["configOptions"], "mode")["currentValue"] == "auto-edit"


async def test_the_chosen_model_survives_a_restart_and_a_snapshot_round_trip(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    first = await spawn_daemon(env={"TETHER_MODELS": "a,b"})
    session = await first.client.new_session(workspace)
    assert option(session.info["configOptions"], "model")["currentValue"] == "default"
    await first.client.request("session/set_model", {"sessionId": session.id, "modelId": "b"})
    await first.client.close()

    second = await spawn_daemon(env={"TETHER_MODELS": "a,b"})
    loaded = await second.client.load_session(session.id, workspace)
    assert option(loaded.info["configOptions"], "model")["currentValue"] == "b"
    snapshot = await second.client.request("_tether/session/dump", {"sessionId": session.id})

    other = tmp_path / "other"
    other.mkdir()
    restored = await second.client.request("_tether/session/restore", {"snapshot": snapshot, "cwd": str(other)})
    resumed = await second.client.resume_session(restored["sessionId"], other)
    assert option(resumed.info["configOptions"], "model")["currentValue"] == "b"
    forked = await second.client.request("session/fork", {"sessionId": session.id, "cwd": str(workspace)})
    assert option(forked["configOptions"], "model")["currentValue"] == "b"
