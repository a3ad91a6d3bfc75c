"""A tool call's argument check, in process (issue 32 item 1; figures in bench/RESULTS.md,
"Issue 32: tool arguments, settings and snapshots on msgspec").

    .venv/bin/python bench/tool_args.py [--base /path/to/other/checkout]

CPU time (`time.process_time`, best of 9 rounds) of `validate_args` (the model's JSON ->
the tool's typed arguments), per call in microseconds, for: `read_file` with a path and a
window, `edit_file` with three edits, `run_command` under a configured cap, and a refused
call (`read_file` with a wrong type: the message is written). With `--base`, the other
checkout's interpreter runs the same code first, then this one, alternating for three
rounds; medians of the rounds are printed per tree.
"""

from __future__ import annotations

import sys
import time
import timeit
from pathlib import Path
from typing import Any

CALLS = 2_000


def measure(root: Path) -> dict[str, float]:
    sys.path[:0] = [str(root / "daemon"), str(root / "protocol")]
    from tether.tools.base import ToolError, validate_args
    from tether.tools.edit_file import EditFileTool
    from tether.tools.read_file import ReadFileTool
    from tether.tools.run_command import RunCommandTool

    read, edit, run = ReadFileTool(), EditFileTool(), RunCommandTool(max_timeout=300)
    edits = [{"old_text": f"x = {i}", "new_text": f"x = {i + 1}", "replace_all": i == 2} for i in range(3)]

    def refused() -> None:
        try:
            validate_args(read, {"path": "src/app.py", "limit": "ten"})
        except ToolError:
            return
        raise AssertionError("a wrong type was accepted")

    work: dict[str, Any] = {
        "read_file_us": lambda: validate_args(read, {"path": "src/app.py", "offset": 10, "limit": 40}),
        "edit_file_us": lambda: validate_args(edit, {"path": "src/app.py", "edits": edits}),
        "run_command_us": lambda: validate_args(run, {"command": "make test", "timeout": 60}),
        "refused_us": refused,
    }
    for fn in work.values():
        fn()  # the first call pays any lazy import
    return {
        name: round(min(timeit.Timer(fn, timer=time.process_time).repeat(number=CALLS, repeat=9)) * 1e6 / CALLS, 2)
        for name, fn in work.items()
    }


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from two_trees import compare

    compare("tool_args.py", __doc__ or "", measure)
