"""Checkpoints (issue 20's benchmark; figures go to bench/RESULTS.md).

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/checkpoints.py

1. Recording a 20-edit turn: 20 `edit_file`-sized writes (20 files of ~8 KiB, one line
   changed each) through the daemon's `DiskFileIO`, then the step commit of their 20 tool
   results in a real SQLite history. Baseline: the same writes and commit without
   recording. With: each write through the recorder (the content before and after read
   and hashed, the blobs kept), and the commit carrying the change rows and blobs. The
   cost per edit is (with - baseline) / 20; median of 15 turns, each on fresh files.
2. The before/after scan of `run_command` on this repository (a command that changes
   nothing: the stat scan before, with what it reads ahead, and the scan after). Compared
   with `git status --porcelain` on the same tree (what a git-based checkpoint would run),
   median of 15; and the same files copied without git (every file read ahead).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "daemon"), str(ROOT / "protocol")]

EDITS = 20
RUNS = 15


async def one_turn(ws: Path, store: object, session_id: str, turn: int, record: bool) -> float:
    from tether.store import HistoryStore, MessageRecord
    from tether.store.records import ChangeSet
    from tether.tools.changes import ChangeRecorder, KnownFiles
    from tether.tools.disk_io import DiskFileIO
    from tether.tools.sandbox import WorkspaceSandbox
    from tether_protocol.conversation import ToolResultMessage, UserMessage

    assert isinstance(store, HistoryStore)
    sandbox = WorkspaceSandbox(ws)
    files = DiskFileIO(sandbox)
    known = KnownFiles()
    paths = []
    for i in range(EDITS):
        path = ws / f"t{turn}" / f"file{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"line {n} of file {i}: some code here\n" for n in range(250)))
        paths.append(path)
    turn_id = f"turn_{turn}_{record}"
    from tether_protocol.conversation import TextBlock

    await store.begin_turn(session_id, turn_id, MessageRecord.of(UserMessage((TextBlock("edit"),))))
    started = time.perf_counter()
    records = []
    for i, path in enumerate(paths):
        text = path.read_text().replace("line 100 of", "LINE 100 of")
        result = ToolResultMessage(f"c{turn}_{i}", "edit_file", f"Edited {path.name}: +1 -1 lines.")
        if record:
            recorder = ChangeRecorder(sandbox, known)
            await recorder.wrap(files).write_text(path, text)
            rows = tuple((c.path, c.before, c.after, c.note) for c in recorder.changes.values())
            records.append(MessageRecord.of(result, changes=ChangeSet(result.tool_call_id, rows, recorder.blobs)))
        else:
            await files.write_text(path, text)
            records.append(MessageRecord.of(result))
    await store.append_messages(session_id, turn_id, records)
    elapsed = time.perf_counter() - started
    await store.finish_turn(turn_id, "complete", "end_turn")
    return elapsed


async def components(ws: Path, store: object) -> tuple[float, float, float]:
    """The recorder's own work per edit (read and hash before and after, off the write),
    and a 20-result step commit without and with its change rows and blobs (medians)."""
    from tether.store import HistoryStore, MessageRecord
    from tether.store.records import ChangeSet
    from tether.tools.changes import ChangeRecorder, KnownFiles
    from tether.tools.sandbox import WorkspaceSandbox
    from tether_protocol.conversation import TextBlock, ToolResultMessage, UserMessage

    assert isinstance(store, HistoryStore)
    sandbox, known = WorkspaceSandbox(ws), KnownFiles()
    work, plain, with_rows = [], [], []
    for run in range(RUNS):
        records, bare = [], []
        for i in range(EDITS):
            path = ws / f"c{run}" / f"file{i}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(f"line {n} of file {i}: some code here\n" for n in range(250)))
            recorder = ChangeRecorder(sandbox, known)
            started = time.perf_counter()
            states = recorder.before([str(path)])
            read = time.perf_counter()
            path.write_text(path.read_text().replace("line 100 of", "LINE 100 of"))
            written = time.perf_counter()
            recorder.after(states)
            work.append(time.perf_counter() - written + (read - started))
            result = ToolResultMessage(f"k{run}_{i}", "edit_file", "Edited: +1 -1 lines.")
            rows = tuple((c.path, c.before, c.after, c.note) for c in recorder.changes.values())
            records.append(MessageRecord.of(result, changes=ChangeSet(result.tool_call_id, rows, recorder.blobs)))
            bare.append(MessageRecord.of(ToolResultMessage(f"b{run}_{i}", "edit_file", "Edited: +1 -1 lines.")))
        for batch, times in ((bare, plain), (records, with_rows)):
            turn_id = f"turn_c{run}_{len(times)}_{id(batch)}"
            await store.begin_turn("sess_bench", turn_id, MessageRecord.of(UserMessage((TextBlock("x"),))))
            started = time.perf_counter()
            await store.append_messages("sess_bench", turn_id, batch)
            times.append(time.perf_counter() - started)
            await store.finish_turn(turn_id, "complete", "end_turn")
    return statistics.median(work), statistics.median(plain), statistics.median(with_rows)


async def recording() -> tuple[float, float, tuple[float, float, float]]:
    from tether.store import HistoryStore

    tmp = Path(tempfile.mkdtemp(prefix="tether-bench-cp-"))
    try:
        ws = tmp / "ws"
        ws.mkdir()
        store = await HistoryStore.open(tmp / "history.sqlite3")
        await store.create_session("sess_bench", str(ws), "ask")
        base, rec = [], []
        for turn in range(RUNS):  # interleaved: the machine's load hits both alike
            base.append(await one_turn(ws, store, "sess_bench", 2 * turn, record=False))
            rec.append(await one_turn(ws, store, "sess_bench", 2 * turn + 1, record=True))
        parts = await components(ws, store)
        await store.close()
        return statistics.median(base), statistics.median(rec), parts
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def scan(root: Path = ROOT) -> tuple[float, float, int, bool]:
    from tether.tools.changes import ChangeRecorder, KnownFiles
    from tether.tools.sandbox import WorkspaceSandbox

    sandbox = WorkspaceSandbox(root)
    ours, git = [], []
    files, complete = 0, True
    for _ in range(RUNS):
        recorder = ChangeRecorder(sandbox, KnownFiles())
        started = time.perf_counter()
        before = recorder.scan_before()
        recorder.scan_after(before)
        ours.append(time.perf_counter() - started)
        files, complete = len(before.stats), before.complete
        started = time.perf_counter()
        subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, check=False)
        git.append(time.perf_counter() - started)
    return statistics.median(ours), statistics.median(git), files, complete


def main() -> None:
    base, rec, (work, plain, with_rows) = asyncio.run(recording())
    print(
        f"20-edit turn, writes + step commit: baseline {base * 1000:.1f} ms, recorded {rec * 1000:.1f} ms "
        f"(x{rec / base:.2f}); recording costs {(rec - base) * 1000 / EDITS:.2f} ms per edit"
    )
    print(
        f"  the recorder's own work: {work * 1e6:.0f} us per edit; the 20-result step commit "
        f"{plain * 1000:.2f} ms -> {with_rows * 1000:.2f} ms with its rows and blobs "
        f"({(with_rows - plain) * 1000 / EDITS:.3f} ms per edit)"
    )
    ours, git, files, complete = scan()
    print(
        f"before/after scan of this repository ({files} files{'' if complete else ', over budget'}): "
        f"{ours * 1000:.1f} ms; git status --porcelain {git * 1000:.1f} ms (x{ours / git:.2f})"
    )
    # the same files without git: every file up to 256 KiB is read ahead (16 MiB in all)
    tmp = Path(tempfile.mkdtemp(prefix="tether-bench-scan-"))
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        for name in listed.splitlines():
            if (ROOT / name).is_file():
                (tmp / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, tmp / name)
        plain, _git, files, complete = scan(tmp)
        print(f"the same tree without git ({files} files, all read ahead): {plain * 1000:.1f} ms")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"cores {os.cpu_count()}, load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
