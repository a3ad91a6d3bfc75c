"""What the change recorder records: the file tools' writes and a command's changes (real files, real git)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from typing import TYPE_CHECKING

import pytest

from tether.tools import tree_scan
from tether.tools.base import ToolResult
from tether.tools.changes import UNRECORDED, ChangeRecorder, KnownFiles
from tether.tools.disk_io import DiskFileIO
from tether.tools.sandbox import WorkspaceSandbox

if TYPE_CHECKING:
    from pathlib import Path


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "README.md").write_text("hello\n")
    (root / "src" / "pkg" / "a.py").write_text("a = 1\n")
    (root / "src" / "pkg" / "b.py").write_text("b = 2\n")
    return root.resolve()


def recorder(ws: Path, known: KnownFiles | None = None, cap: int = 1024 * 1024) -> ChangeRecorder:
    return ChangeRecorder(WorkspaceSandbox(ws), known or KnownFiles(), cap)


async def test_the_file_tools_writes_are_recorded_with_their_contents(ws: Path) -> None:
    rec = recorder(ws)
    files = rec.wrap(DiskFileIO(rec.sandbox))
    await files.write_text(ws / "README.md", "hello again\n")
    await files.write_text(ws / "README.md", "hello a third time\n")  # one change: first before, last after
    await files.write_text(ws / "new.txt", "new\n")
    await files.move(ws / "src" / "pkg", ws / "lib")
    await files.delete(ws / "lib")
    changes = {c.path: (c.before, c.after, c.note) for c in rec.changes.values()}
    assert changes == {
        "README.md": (sha(b"hello\n"), sha(b"hello a third time\n"), None),
        "new.txt": (None, sha(b"new\n"), None),
        "src/pkg/a.py": (sha(b"a = 1\n"), None, None),
        "src/pkg/b.py": (sha(b"b = 2\n"), None, None),
        # moved in, then deleted: created and gone within the call, so not a change
    }
    result = rec.attach(ToolResult("done"))
    assert set(result.file_blobs) >= {sha(b"hello\n"), sha(b"hello a third time\n"), sha(b"a = 1\n")}
    assert result.text == "done"  # everything recorded: no notice


async def test_a_file_over_the_cap_is_named_in_the_result(ws: Path) -> None:
    rec = recorder(ws, cap=10)
    await rec.wrap(DiskFileIO(rec.sandbox)).write_text(ws / "README.md", "a longer text than ten bytes\n")
    (change,) = rec.changes.values()
    assert change.after == UNRECORDED and "larger than" in (change.note or "")
    result = rec.attach(ToolResult("Wrote README.md"))
    assert "not recorded, so a rewind cannot restore them: README.md (it is larger than" in result.text


def run(ws: Path, command: str) -> None:
    subprocess.run(command, shell=True, cwd=ws, check=True)


def test_a_command_s_changes_are_found_by_the_scan(ws: Path) -> None:
    rec = recorder(ws)
    before = rec.scan_before()
    assert before.complete and set(before.copies) == {"README.md", "src/pkg/a.py", "src/pkg/b.py"}
    run(ws, "sed -i 's/1/100/' src/pkg/a.py && echo generated > gen.txt && rm src/pkg/b.py")
    rec.scan_after(before)
    changes = {c.path: (c.before, c.after) for c in rec.changes.values()}
    assert changes == {
        "src/pkg/a.py": (sha(b"a = 1\n"), sha(b"a = 100\n")),
        "gen.txt": (None, sha(b"generated\n")),
        "src/pkg/b.py": (sha(b"b = 2\n"), None),
    }
    assert rec.blobs[sha(b"a = 1\n")] == b"a = 1\n"


def test_a_file_tether_stored_needs_no_copy_before_a_command(ws: Path) -> None:
    known = KnownFiles()
    first = recorder(ws, known)
    before = first.scan_before()
    run(ws, "echo one > gen.txt")
    first.scan_after(before)
    first.attach(ToolResult(""))
    second = recorder(ws, known)
    again = second.scan_before()
    assert again.known == {"gen.txt": sha(b"one\n")} and "gen.txt" not in again.copies
    run(ws, "sed -i 's/one/two/' gen.txt")
    second.scan_after(again)
    (change,) = second.changes.values()
    assert (change.before, change.after) == (sha(b"one\n"), sha(b"two\n"))


def git(ws: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=ws, check=True, capture_output=True)


def test_a_clean_tracked_file_comes_from_git_not_from_a_copy(ws: Path) -> None:
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "start")
    old = time.time() - 10
    for name in ("README.md", "src/pkg/a.py", "src/pkg/b.py"):
        os.utime(ws / name, (old, old))
    git(ws, "update-index", "--refresh")
    (ws / "src" / "pkg" / "b.py").write_text("b = 3\n")  # dirty: copied before the command
    rec = recorder(ws)
    before = rec.scan_before()
    assert set(before.git) == {"README.md", "src/pkg/a.py"} and set(before.copies) == {"src/pkg/b.py"}
    run(ws, "sed -i 's/hello/bye/' README.md")
    rec.scan_after(before)
    (change,) = rec.changes.values()
    assert (change.path, change.before, change.after) == ("README.md", sha(b"hello\n"), sha(b"bye\n"))
    assert rec.blobs[sha(b"hello\n")] == b"hello\n"


def test_a_tree_too_large_to_scan_in_time_is_not_compared(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(200):
        (ws / f"f{i}.txt").write_text(str(i))
    monkeypatch.setattr(tree_scan, "SCAN_BUDGET_S", 0.0)
    rec = recorder(ws)
    before = rec.scan_before()
    assert not before.complete
    run(ws, "echo x > f1.txt")
    rec.scan_after(before)
    assert rec.changes == {}
    assert "the files this command changed were not recorded" in rec.attach(ToolResult("ok")).text
