"""ACP v2 `session/resume` of a session whose turn a killed daemon left waiting for approval
(SPEC §12.9, §5.14): without `replayFrom` the turn is not resumed (state `requires_action`, a
notice naming v2's ways on; a prompt's turn is refused naming them); with `replayFrom: {type: "start"}` the waiting call is replayed
`pending`, then `replay_complete` and `requires_action`, and after the answer it is asked again
in v2's shape (`requires_action`, then `running` once answered) and the turn ends `idle`."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest

from daemon_harness import EXAMPLES, User, left_waiting, until
from tether_client import ClientError

if TYPE_CHECKING:
    from pathlib import Path

SCRIPT = EXAMPLES / "approvals.json"


def _updates(client: Any, session_id: str) -> list[dict[str, Any]]:
    return [p["update"] for m, p in client.notifications if m == "session/update" and p.get("sessionId") == session_id]


async def test_a_v2_resume_with_replay_asks_again_and_one_without_says_how(spawn_daemon, workspace: Path) -> None:
    session_id = await left_waiting(spawn_daemon, workspace)
    user = User("allow_once")
    second = await spawn_daemon(script=SCRIPT, initialize=False)
    client = second.client
    client.peer.on_request = user.on_request
    init = await client.initialize(
        protocolVersion=2,
        info={"name": "t", "version": "1"},
        capabilities={"_meta": {"tether": {"namedPermissionOptions": True}}},
    )
    assert init["protocolVersion"] == 2

    # no replay: nothing of the turn, its state, and (after the answer) the way on in v2's terms
    await client.request("session/resume", {"sessionId": session_id, "cwd": str(workspace)})
    await until(lambda: any(u["sessionUpdate"] == "notice" for u in _updates(client, session_id)))
    kinds = [u["sessionUpdate"] for u in _updates(client, session_id)]
    assert kinds in (["state_update", "notice"], ["state_update", "notice", "available_commands_update"])
    assert _updates(client, session_id)[0] == {"sessionUpdate": "state_update", "state": "requires_action"}
    (said,) = [u["title"] for u in _updates(client, session_id) if u["sessionUpdate"] == "notice"]
    assert 'session/resume with replayFrom {"type": "start"} shows it and asks again' in said
    assert "session/cancel drops it" in said and user.prompts == []
    client.notifications.clear()
    # a prompt meanwhile: refused before it is inserted (no messageId, nothing shown or
    # stored), naming v2's way on
    with pytest.raises(ClientError) as refused:
        await client.request("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]})
    assert refused.value.code == -32010
    assert 'send session/resume with replayFrom {"type": "start"} to see it' in refused.value.message
    await asyncio.sleep(0.2)
    assert [u for u in _updates(client, session_id) if u["sessionUpdate"] != "available_commands_update"] == []
    client.notifications.clear()

    # with replay: the waiting call pending, the marker, the state; then it is asked again
    await client.request(
        "session/resume", {"sessionId": session_id, "cwd": str(workspace), "replayFrom": {"type": "start"}}
    )
    # (the first resume's command list may come in after it was cleared; the turn asked again
    # may send its first update right after the answer, read in the same chunk as the answer)
    shown = [u for u in _updates(client, session_id) if u["sessionUpdate"] != "available_commands_update"]
    end = [u["sessionUpdate"] for u in shown].index("replay_complete")
    replayed = shown[:end]
    assert shown[end + 1] == {"sessionUpdate": "state_update", "state": "requires_action"}
    (edit,) = [u for u in replayed if u.get("toolCallId") == "call_edit"]
    assert edit["status"] == "pending" and edit["sessionUpdate"] == "tool_call_update"
    # the refused prompt was not stored: the one prompt replayed is the waiting turn's
    assert [u["content"] for u in replayed if u["sessionUpdate"] == "user_message"] == [
        [{"type": "text", "text": "edit the readme"}]
    ]

    await until(lambda: user.prompts)
    (asked,) = user.prompts
    assert asked["subject"]["type"] == "tool_call" and asked["subject"]["toolCall"]["toolCallId"] == "call_edit"
    await until(lambda: _updates(client, session_id)[-1].get("state") == "idle")
    states = [u["state"] for u in _updates(client, session_id) if u["sessionUpdate"] == "state_update"]
    assert states == ["requires_action", "requires_action", "running", "idle"]  # the snapshot, then the turn's
    assert _updates(client, session_id)[-1]["stopReason"] == "end_turn"
    assert (workspace / "README.md").read_text() == "# Sample\n\nHello, edited by Tether.\n"
