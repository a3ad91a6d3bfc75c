"""A huge text file in the repository (a data dump, a log; or one a command wrote) read by
the model a page at a time, as read_file's description tells it to: the daemon must not
hold the whole file in memory to remember what the model read. Through a real `tether
serve`: the page is shown, and the daemon's peak memory grows by far less than the file's
size (it grew by twice the file's size: its bytes, then its text)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from measured_turn import measured_turn  # noqa: E402

_MB = 1024 * 1024
_SIZE = 512 * _MB


async def test_reading_a_page_of_a_huge_file_does_not_load_it(spawn_daemon, workspace: Path, tmp_path: Path) -> None:
    line = b"row,of,a,large,data,dump\n"
    with open(workspace / "dump.csv", "wb") as out:
        out.write(b"header,line\n")
        block = line * (_MB // len(line))
        for _ in range(_SIZE // len(block)):
            out.write(block)
    _daemon, _session, updates, grown = await measured_turn(
        spawn_daemon, workspace, tmp_path, "read_file", {"path": "dump.csv", "offset": 1, "limit": 3})
    assert "header,line" in updates, updates[-1500:]
    assert grown < 64 * _MB, f"reading 3 lines of a {_SIZE // _MB} MB file grew the daemon by {grown // _MB} MB"
