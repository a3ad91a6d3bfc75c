"""A huge text file in the repository (a data dump, a log; or one a command wrote) read by
the model a page at a time, as read_file's description tells it to: the daemon must not
hold the whole file in memory to remember what the model read. Through a real `tether
serve`: the page is shown, and the daemon's peak memory grows by far less than the file's
size (it grew by twice the file's size: its bytes, then its text)."""

from __future__ import annotations

import json
from pathlib import Path

_MB = 1024 * 1024
_SIZE = 512 * _MB


def _peak(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1]) * 1024


async def test_reading_a_page_of_a_huge_file_does_not_load_it(spawn_daemon, workspace: Path, tmp_path: Path) -> None:
    line = b"row,of,a,large,data,dump\n"
    with open(workspace / "dump.csv", "wb") as out:
        out.write(b"header,line\n")
        block = line * (_MB // len(line))
        for _ in range(_SIZE // len(block)):
            out.write(block)
    script = tmp_path / "page.json"
    script.write_text(json.dumps({"replies": [
        {"when": {"step": 1}, "tool_calls": [
            {"id": "page", "name": "read_file", "arguments": {"path": "dump.csv", "offset": 1, "limit": 3}}]},
        {"text": "done"},
    ]}))
    daemon = await spawn_daemon("--mode", "full-auto", script=script, env={"TETHER_SANDBOX": "bwrap"})
    session = await daemon.client.new_session(workspace)
    before = _peak(daemon.pid)
    turn = session.prompt("look at the dump")
    updates = json.dumps([u async for u in turn])
    assert turn.stop_reason == "end_turn" and "header,line" in updates, updates[-1500:]
    grown = _peak(daemon.pid) - before
    assert grown < 64 * _MB, f"reading 3 lines of a {_SIZE // _MB} MB file grew the daemon by {grown // _MB} MB"
