"""One turn of the scripted model making one tool call, through a real `tether serve` in
full-auto under bubblewrap, with what it added to the daemon's peak memory (VmHWM): how
the attacks on Tether's own reading of repository content measure a memory blow-up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _peak(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1]) * 1024


async def measured_turn(spawn_daemon: Any, workspace: Path, tmp_path: Path, tool: str, arguments: dict) -> tuple:
    """(the daemon, its session, the turn's updates as JSON text, the peak memory it added)."""
    script = tmp_path / "one-call.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {"when": {"step": 1}, "tool_calls": [{"id": "call", "name": tool, "arguments": arguments}]},
                    {"text": "done"},
                ]
            }
        )
    )
    daemon = await spawn_daemon("--mode", "full-auto", script=script, env={"TETHER_SANDBOX": "bwrap"})
    session = await daemon.client.new_session(workspace)
    before = _peak(daemon.pid)
    turn = session.prompt("go")
    updates = json.dumps([u async for u in turn])
    assert turn.stop_reason == "end_turn", updates[-1500:]
    return daemon, session, updates, _peak(daemon.pid) - before
