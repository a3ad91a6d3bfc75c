"""A v2 window that joins a session while its `delegate` call's child runs (SPEC §12.6, §12.9):
a second v2 window of one shared daemon resumes the session, with its replay, while the child
answers in the first. It is told of the child (`subagent_update` with its state, running) and
sees the child's updates on its id from then on, to its end. Real shared daemon, real windows."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from daemon_harness import until

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
from v2_window import assert_valid, opened

SLOW = "The child answers slowly, a few characters at a time, so another window joins it. " * 2


def _slow_child(tmp_path: Path) -> Path:
    script = tmp_path / "slow-child.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1, "user": "^ask"},
                        "tool_calls": [
                            {"id": "d1", "name": "delegate", "arguments": {"task": "Say something slowly."}}
                        ],
                    },
                    {"when": {"purpose": "delegate", "step": 1}, "text": SLOW, "chunk_size": 4, "delay_ms": 30},
                    {"when": {"step": 2, "user": "^ask"}, "text": "It spoke."},
                ]
            }
        )
    )
    return script


async def test_a_window_joining_while_a_child_runs_sees_the_child(windows, workspace: Path, tmp_path: Path):
    script = _slow_child(tmp_path)
    first, second = await opened(windows, script), await opened(windows, script)
    session = await first.new_session(workspace)
    await first.prompt(session, "ask a sub-agent")
    await until(lambda: first.of(session, "subagent_update"))
    child = first.of(session, "subagent_update")[0]["sessionId"]
    await until(lambda: len(first.of(child, "agent_message_chunk")) > 3, timeout=30)  # the child has begun

    await second.client.request(
        "session/resume",
        {"sessionId": session, "cwd": str(workspace), "mcpServers": [], "replayFrom": {"type": "start"}},
    )
    joined = len(second.updates)
    told = [u for u in second.of(session, "subagent_update") if "state" in u]
    assert told and told[-1]["sessionId"] == child and told[-1]["state"] == {"state": "running"}
    assert told[-1]["capabilities"] == {"cancel": {}} and told[-1]["_meta"]["tether"]["parentCallId"] == "d1"
    await until(lambda: "idle" in second.states(child), timeout=60)
    await until(lambda: "idle" in second.states(session), timeout=60)

    # the child's updates from the join on, on its id, up to its end; its text as the first window's
    later = [u for s, u in second.updates[joined:] if s == child]
    assert [u for u in later if u["sessionUpdate"] == "agent_message_chunk"]
    assert later[-1] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    said = "".join(u["content"]["text"] for u in second.of(child) if u["sessionUpdate"] == "agent_message_chunk")
    assert said and SLOW.endswith(said[-20:])
    ended = [u for u in second.of(session, "subagent_update") if "state" in u][-1]
    assert ended["state"] == {"state": "idle", "stopReason": "end_turn"}
    assert_valid(second)


async def test_a_child_started_under_a_v1_window_is_shown_to_a_v2_window_that_joins(
    windows, workspace: Path, tmp_path: Path
):
    """The `delegate` ran with only a v1 window watching (the child nested under its call); a
    v2 window that joins later is told of the child and gets its updates on its id from then on."""
    script = _slow_child(tmp_path)
    classic = await windows.open(script=script)
    watching = await classic.new_session(workspace)
    turn = watching.prompt("ask a sub-agent")
    turn.start()
    await until(lambda: any("sub-agent started" in json.dumps(u) for u in turn.updates), timeout=30)

    modern = await opened(windows, script)
    await modern.client.request("session/resume", {"sessionId": watching.id, "cwd": str(workspace), "mcpServers": []})
    told = [u for u in modern.of(watching.id, "subagent_update") if "state" in u]
    assert told, modern.updates
    child = told[0]["sessionId"]
    assert told[0]["state"] == {"state": "running"} and told[0]["capabilities"] == {"cancel": {}}
    assert told[0]["_meta"]["tether"]["parentCallId"] == "d1"
    assert (await turn.wait())["stopReason"] == "end_turn"
    await until(lambda: "idle" in modern.states(watching.id), timeout=20)
    assert "idle" in modern.states(child), modern.updates

    # the child's text from the join on, on its own id, under its turn's message ids, up to its end
    mine = modern.of(child)
    said = "".join(u["content"]["text"] for u in mine if u["sessionUpdate"] == "agent_message_chunk")
    assert said and SLOW.endswith(said)
    ids = {u["messageId"] for u in mine if u["sessionUpdate"] == "agent_message_chunk"}
    assert len(ids) == 1 and ids.pop().endswith(".1")
    assert mine[-1] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    ended = [u for u in modern.of(watching.id, "subagent_update") if "state" in u][-1]
    assert ended == {**ended, "sessionId": child, "state": {"state": "idle", "stopReason": "end_turn"}}
    # the v1 window still sees the child nested, and no child session of its own
    assert [u for u in turn.updates if u.get("toolCallId") == "d1" and u.get("status") == "completed"]
    assert not [u for u in turn.updates if u["sessionUpdate"] == "subagent_update"]
    assert_valid(modern)
