"""The size cap on a message the user sends (SPEC §3.8): `max_message_mib`, 8 MiB of text.

A prompt (v1 and v2) or a steered message over it is refused `-32602` naming the method, the
field, the size and the limit, and nothing is stored; a workspace config cannot raise the cap,
the user's config can.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from test_acp_v2_idempotency import Ndjson, _replayed_prompts

if TYPE_CHECKING:
    from pathlib import Path

NINE_MIB = "x" * (9 * 1024 * 1024)


def _prompt(session_id: str, text: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": "see below"}, {"type": "text", "text": text}]}


async def _session(client: Ndjson, workspace: Path) -> str:
    new = await client.request("session/new", {"cwd": str(workspace), "mcpServers": []})
    return str(new["result"]["sessionId"])


async def test_a_prompt_over_the_cap_is_refused_on_both_versions_and_nothing_is_stored(
    daemon_env: dict[str, str],
    workspace: Path,
) -> None:
    (workspace / ".tether").mkdir()
    (workspace / ".tether" / "config.toml").write_text("max_message_mib = 64\n")  # a workspace cannot loosen it
    v1 = await Ndjson.start(workspace, daemon_env, 1)
    session_id = await _session(v1, workspace)
    refused_v1 = await v1.request("session/prompt", _prompt(session_id, NINE_MIB))
    steered = await v1.request("_tether/session/steer", _prompt(session_id, NINE_MIB))
    await v1.close()
    v2 = await Ndjson.start(workspace, daemon_env, 2)
    await v2.request("session/resume", {"sessionId": session_id, "cwd": str(workspace)})
    refused_v2 = await v2.request("session/prompt", {**_prompt(session_id, NINE_MIB), "idempotencyKey": "k"})
    small = await v2.request("session/prompt", {**_prompt(session_id, "small"), "idempotencyKey": "k"})
    await v2.close()

    for refused, method in (
        (refused_v1, "session/prompt"),
        (steered, "_tether/session/steer"),
        (refused_v2, "session/prompt"),
    ):
        assert refused["error"]["code"] == -32602
        message = refused["error"]["message"]
        assert f"invalid params for {method}: prompt holds 9.0 MiB of text" in message
        assert "prompt[1].text, 9.0 MiB" in message and "over the limit of 8 MiB per message" in message
        assert "max_message_mib in your user config" in message
    assert "messageId" in small["result"]  # the refused prompt took no key
    assert await _replayed_prompts(workspace, daemon_env, session_id) == ["see below", "small"]


async def test_the_users_config_raises_the_cap(daemon_env: dict[str, str], workspace: Path, tmp_path: Path) -> None:
    config = tmp_path / "xdg-config" / "tether" / "config.toml"  # XDG_CONFIG_HOME of daemon_env
    config.parent.mkdir(parents=True)
    config.write_text("max_message_mib = 16\n")
    client = await Ndjson.start(workspace, daemon_env, 1)
    session_id = await _session(client, workspace)
    answer = await client.request("session/prompt", _prompt(session_id, NINE_MIB))
    await client.close()
    assert answer["result"]["stopReason"] == "end_turn"
    replayed = await _replayed_prompts(workspace, daemon_env, session_id)
    # accepted whole; the model is given its first 32,000 characters, as any long prompt (SPEC §5.16)
    assert replayed[0] == "see below" and replayed[1].startswith("x" * 31_000)
