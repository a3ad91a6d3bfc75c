"""A huge text file in the repository (a data dump, a log; or one a command wrote) read by
the model a page at a time, as read_file's description tells it to, or searched with grep
(its Python backend, which runs when no `rg` is installed): the daemon must not hold the whole file
in memory to remember what the model read, nor to search it. Through a real `tether
serve`: the page is shown, and the daemon's peak memory grows by far less than the file's
size (it grew by twice the file's size: its bytes, then its text)."""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

from tether.tools.base import ToolContext
from tether.tools.grep import GrepTool
from tether.tools.sandbox import WorkspaceSandbox

sys.path.insert(0, str(Path(__file__).parent))
from measured_turn import measured_turn

_MB = 1024 * 1024
_SIZE = 512 * _MB


def _write_dump(path: Path, size: int = _SIZE) -> None:
    line = b"row,of,a,large,data,dump\n"
    with open(path, "wb") as out:
        out.write(b"header,line\n")
        block = line * (_MB // len(line))
        for _ in range(size // len(block)):
            out.write(block)


async def test_reading_a_page_of_a_huge_file_does_not_load_it(spawn_daemon, workspace: Path, tmp_path: Path) -> None:
    _write_dump(workspace / "dump.csv")
    _daemon, _session, updates, grown = await measured_turn(
        spawn_daemon, workspace, tmp_path, "read_file", {"path": "dump.csv", "offset": 1, "limit": 3}
    )
    assert "header,line" in updates, updates[-1500:]
    assert grown < 64 * _MB, f"reading 3 lines of a {_SIZE // _MB} MB file grew the daemon by {grown // _MB} MB"


async def test_grep_through_a_huge_file_does_not_load_it(workspace: Path) -> None:
    """The Python backend (what runs without `rg`), in this process: tracemalloc sees
    every allocation, so the peak is exact (the daemon's rg is a wheel of its own); a
    smaller dump, as tracemalloc slows each line down."""
    _write_dump(workspace / "dump.csv", 64 * _MB)
    with open(workspace / "dump.csv", "ab") as out:
        out.write(b"the,needle,row\n")
    ctx = ToolContext(sandbox=WorkspaceSandbox(workspace), call_id="grep")
    tracemalloc.start()
    try:
        result = await GrepTool(backend="python").call({"pattern": "needle", "path": "dump.csv"}, ctx)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "the,needle,row" in result.text, result.text
    assert peak < 8 * _MB, f"grep through a 64 MB file took {peak // _MB} MB"
