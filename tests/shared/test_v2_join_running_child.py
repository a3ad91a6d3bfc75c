"""A v2 window that joins a session while its `delegate` call's child runs (SPEC §12.6, §12.9):
a second v2 window of one shared daemon resumes the session, with its replay, while the child
answers in the first. It is told of the child (`subagent_update` with its state, running) and
sees the child's updates on its id from then on, to its end. Real shared daemon, real windows."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from daemon_harness import until
from tether_protocol.acp_v2 import convert
from tether_protocol.acp_v2 import schema_types as v2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
from v2_window import opened  # noqa: E402

SLOW = "The child answers slowly, a few characters at a time, so another window joins it. " * 2


async def test_a_window_joining_while_a_child_runs_sees_the_child(windows, workspace: Path, tmp_path: Path):
    script = tmp_path / "slow-child.json"
    script.write_text(json.dumps({"replies": [
        {"when": {"step": 1, "user": "^ask"}, "tool_calls": [
            {"id": "d1", "name": "delegate", "arguments": {"task": "Say something slowly."}}]},
        {"when": {"purpose": "delegate", "step": 1}, "text": SLOW, "chunk_size": 4, "delay_ms": 30},
        {"when": {"step": 2, "user": "^ask"}, "text": "It spoke."},
    ]}))
    first, second = await opened(windows, script), await opened(windows, script)
    session = await first.new_session(workspace)
    await first.prompt(session, "ask a sub-agent")
    await until(lambda: first.of(session, "subagent_update"))
    child = first.of(session, "subagent_update")[0]["sessionId"]
    await until(lambda: len(first.of(child, "agent_message_chunk")) > 3, timeout=30)  # the child has begun

    await second.client.request("session/resume", {
        "sessionId": session, "cwd": str(workspace), "mcpServers": [], "replayFrom": {"type": "start"}})
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
    for session_id, update in second.updates:
        note = convert({"sessionId": session_id, "update": update}, v2.UpdateSessionNotification, method="update")
        assert not isinstance(note.update.value, dict) or note.update.tag == "replay_complete", update
