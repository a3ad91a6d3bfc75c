"""Two ACP v2 windows of one shared daemon (SPEC §11, §12.9): a window resumes a session,
with its replay, while the session's turn runs in the other. It is told the turn runs,
then sees the rest of it live and its end; the window that prompted sees its turn as if
alone."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from daemon_harness import until

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
from v2_window import opened  # noqa: E402

SLOW = "This answer comes slowly, a few characters at a time, so the other window joins it. " * 2


async def test_a_resume_with_replay_while_the_turn_runs_in_another_window(windows, workspace: Path, tmp_path: Path):
    script = tmp_path / "slow.json"
    script.write_text(json.dumps({"replies": [
        {"when": {"user": "^first", "step": 1}, "text": "Short."},
        {"when": {"user": "^second", "step": 1}, "text": SLOW, "chunk_size": 4, "delay_ms": 30},
    ]}))
    first, second = await opened(windows, script), await opened(windows, script)
    session = await first.new_session(workspace)
    await first.prompt(session, "first")
    await first.idle(session)
    await first.prompt(session, "second")
    await until(lambda: len(first.of(session, "agent_message_chunk")) > 3)  # its answer has begun

    answer = await second.client.request("session/resume", {
        "sessionId": session, "cwd": str(workspace), "mcpServers": [], "replayFrom": {"type": "start"}})
    await until(lambda: first.states(session).count("idle") == 2)
    await until(lambda: "idle" in second.states(session))

    assert "configOptions" in answer
    kinds = [u["sessionUpdate"] for u in second.of(session)]
    done = kinds.index("replay_complete")
    assert kinds.count("replay_complete") == 1 and kinds[0] == "user_message"
    # the state right after the replay: the turn runs (here, in the other window)
    assert second.of(session)[done + 1] == {"sessionUpdate": "state_update", "state": "running"}
    # then the rest of the turn live, under the turn's ids, and its end
    live = [u for u in second.of(session)[done + 1:] if u["sessionUpdate"] == "agent_message_chunk"]
    prompted = {u["messageId"] for u in first.of(session, "agent_message_chunk")}
    assert live and {u["messageId"] for u in live} <= prompted
    assert second.of(session, "state_update")[-1] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    # the window that prompted saw its whole answer, and one end
    said = "".join(u["content"]["text"] for u in first.of(session, "agent_message_chunk"))
    assert said == "Short." + SLOW
    assert first.states(session) == ["running", "idle", "running", "idle"]
