"""ContentLedger: what the model saw of each file, and read_file recording into it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tether.tools.base import ToolContext, ToolError
from tether.tools.ledger import ContentLedger
from tether.tools.read_file import ReadFileTool
from tether.tools.sandbox import WorkspaceSandbox

if TYPE_CHECKING:
    from pathlib import Path


def test_fresh_read_passes_and_changed_text_is_stale(sandbox: WorkspaceSandbox, root: Path) -> None:
    ledger = ContentLedger(sandbox)
    path = root / "src" / "a.py"
    ledger.record(path, "v1\n")
    assert ledger.has_read(path)
    ledger.check(path, "v1\n")
    with pytest.raises(ToolError) as caught:
        ledger.check(path, "v2\n")
    assert str(caught.value) == "'src/a.py' changed since you read it, read it again"


def test_never_read_has_its_own_message(sandbox: WorkspaceSandbox, root: Path) -> None:
    ledger = ContentLedger(sandbox)
    assert not ledger.has_read(root / "b.py")
    with pytest.raises(ToolError, match=r"'b.py' has not been read yet; read it \(read_file\)"):
        ledger.check(root / "b.py", "")


def test_forget_drops_a_file_or_everything_under_a_directory(root: Path) -> None:
    ledger = ContentLedger()
    for rel in ("d/a", "d/sub/b", "dd/c"):
        ledger.record(root / rel, rel)
    ledger.forget(root / "d")
    assert not ledger.has_read(root / "d/a") and not ledger.has_read(root / "d/sub/b")
    assert ledger.has_read(root / "dd/c")  # a sibling sharing the prefix stays
    ledger.forget(root / "never-seen")


def test_stored_entries_are_relative_and_restore_into_another_workspace(
    sandbox: WorkspaceSandbox, root: Path, tmp_path: Path
) -> None:
    ledger = ContentLedger(sandbox)
    ledger.record(root / "src" / "a.py", "v1\n")
    stored = ledger.stored_form({**ledger.snapshot(), str(root / "gone.py"): None})
    assert set(stored) == {"src/a.py", "gone.py"} and stored["gone.py"] is None

    other_root = tmp_path / "other"
    (other_root / "src").mkdir(parents=True)
    moved = ContentLedger(WorkspaceSandbox(other_root))
    moved.restore(stored)
    moved.check(other_root / "src" / "a.py", "v1\n")  # known there, with the same text
    assert not moved.has_read(root / "src" / "a.py")


def test_restore_keeps_old_absolute_entries_only_inside_the_workspace(
    sandbox: WorkspaceSandbox, root: Path, tmp_path: Path
) -> None:
    """Sessions stored before entries were relative name files by absolute path."""
    ledger = ContentLedger(sandbox)
    outside = tmp_path / "elsewhere" / "b.py"
    ledger.restore({str(root / "src" / "a.py"): "d1", str(outside): "d2"})
    assert ledger.has_read(root / "src" / "a.py")
    assert not ledger.has_read(outside)
    assert set(ledger.stored_form(ledger.snapshot())) == {"src/a.py"}
    assert ledger.stored_form({str(outside): "d2"}) == {str(outside): "d2"}  # kept as it is


async def test_read_file_records_the_full_text_even_for_a_window(sandbox: WorkspaceSandbox, write, root: Path) -> None:
    text = "".join(f"{n}\n" for n in range(1, 100))
    write({"f.txt": "\ufeff" + text})
    ledger = ContentLedger(sandbox)
    ctx = ToolContext(sandbox, reads=ledger)
    result = await ReadFileTool().call({"path": "f.txt", "offset": 5, "limit": 2}, ctx)
    assert result.text.startswith("     5\t5\n     6\t6\n[truncated")
    ledger.check(root / "f.txt", "\ufeff" + text)  # the BOM is part of the editable text


async def test_read_file_records_an_open_buffer(sandbox: WorkspaceSandbox, write, root: Path) -> None:
    write({"a.py": "disk\n"})
    ledger = ContentLedger(sandbox)
    ctx = ToolContext(sandbox, documents={str(root / "a.py"): "buffer\n"}, reads=ledger)
    await ReadFileTool().call({"path": "a.py"}, ctx)
    ledger.check(root / "a.py", "buffer\n")


async def test_read_file_does_not_record_non_utf8_text(sandbox: WorkspaceSandbox, write, root: Path) -> None:
    write({"latin.txt": b"ok\n" * 5000 + b"caf\xe9\n"})  # the bad byte is past the sniffed head
    ledger = ContentLedger(sandbox)
    await ReadFileTool().call({"path": "latin.txt", "limit": 1}, ToolContext(sandbox, reads=ledger))
    assert not ledger.has_read(root / "latin.txt")
