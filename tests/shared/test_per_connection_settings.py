"""What is one connection's in the shared daemon stays that connection's (issue 32 item 2):
grep runs rg in the sandbox its own window's settings choose, whatever another window of
the same daemon chose. Real shared daemon, real bubblewrap, real rg."""

from __future__ import annotations

import json
import os
from pathlib import Path

SCRIPT = {
    "model": "scripted-grep",
    "replies": [
        {
            "when": {"user": "^find", "step": 1},
            "text": "Searching.",
            "tool_calls": [{"id": "call_grep", "name": "grep", "arguments": {"pattern": "needle"}}],
        },
        {"when": {"user": "^find", "step": 2}, "text": "Done."},
    ],
}


def _user_config(env: dict[str, str], text: str) -> None:
    config = Path(env["XDG_CONFIG_HOME"]) / "tether" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text)


def _grep_text(updates: list[dict]) -> str:
    return "".join(
        block["content"].get("text", "")
        for update in updates
        if update.get("toolCallId") == "call_grep"
        for block in update.get("content") or []
        if isinstance(block, dict) and block.get("type") == "content"
    )


async def _grep(window, workspace: Path) -> str:
    session = await window.new_session(workspace)
    turn = session.prompt("find the needle")
    await turn.wait()
    assert turn.stop_reason == "end_turn", turn.updates
    return _grep_text(turn.updates)


async def test_each_windows_grep_runs_in_its_own_sandbox_setting(windows, workspace: Path, tmp_path: Path) -> None:
    # the daemon's own setting: no sandbox; a window may ask for one (only stricter)
    _user_config(windows.env, 'sandbox = "off"\n')
    script = tmp_path / "grep.json"
    script.write_text(json.dumps(SCRIPT))
    (workspace / "real.txt").write_text("the needle\n")
    confined = await windows.open(script=script, initialize=False)
    answer = await confined.initialize(initializationOptions={"sandbox": "bwrap"})
    assert "configRefused" not in answer.get("_meta", {}).get("tether", {}), answer
    plain = await windows.open(script=script)  # a second connection, with the daemon's setting
    [pid] = windows.daemon_pids()
    # A link through the daemon's own /proc entry: it leads to real.txt for rg run as the
    # daemon runs it, and to nothing for rg in bubblewrap's pid namespace (its own /proc).
    real = Path(os.path.realpath(workspace))
    (workspace / "through_proc.txt").symlink_to(f"/proc/{pid}/root{real}/real.txt")
    assert (workspace / "through_proc.txt").read_text() == "the needle\n"

    assert "through_proc.txt" in await _grep(plain, workspace)
    sandboxed = await _grep(confined, workspace)  # after the other window's grep, and its start
    assert "real.txt:1:the needle" in sandboxed and "through_proc.txt" not in sandboxed, sandboxed
    late = await windows.open(script=script)  # a window connecting later changes nothing either
    assert "through_proc.txt" in await _grep(late, workspace)
    again = await _grep(confined, workspace)
    assert "real.txt:1:the needle" in again and "through_proc.txt" not in again, again
    assert len(windows.daemon_pids()) == 1
