"""write_file and edit_file: happy paths, the read ledger, atomic multi-edits, refusals."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tether.tools.base import ToolContext, ToolError, validate_args
from tether.tools.disk_io import DiskFileIO
from tether.tools.edit_file import EditFileTool
from tether.tools.ledger import ContentLedger
from tether.tools.read_file import ReadFileTool
from tether.tools.write_file import WriteFileTool

if TYPE_CHECKING:
    from pathlib import Path

    from tether.tools.sandbox import WorkspaceSandbox

WRITE, EDIT = WriteFileTool(), EditFileTool()


@pytest.fixture
def mctx(sandbox: WorkspaceSandbox) -> ToolContext:
    return ToolContext(sandbox, call_id="t", files=DiskFileIO(sandbox), reads=ContentLedger(sandbox))


async def read(ctx: ToolContext, path: str) -> None:
    await ReadFileTool().call({"path": path}, ctx)


def edit(old: str, new: str, **extra: object) -> dict[str, object]:
    return {"old_text": old, "new_text": new, **extra}


async def test_write_creates_a_file_and_its_parents_without_a_read(mctx: ToolContext, root: Path) -> None:
    result = await WRITE.call({"path": "src/pkg/new.py", "content": "a = 1\n"}, mctx)
    assert (root / "src/pkg/new.py").read_text() == "a = 1\n"
    assert result.text == "Created src/pkg/new.py: +1 -0 lines."
    assert result.locations[0].path == str(root / "src/pkg/new.py")
    # What the model wrote counts as read: an edit right after needs no read_file.
    await EDIT.call({"path": "src/pkg/new.py", "edits": [edit("a = 1", "a = 2")]}, mctx)
    assert (root / "src/pkg/new.py").read_text() == "a = 2\n"


async def test_write_preview_has_relative_headers_and_no_side_effects(mctx: ToolContext, root: Path) -> None:
    (preview,) = await WRITE.preview(validate_args(WRITE, {"path": "n.txt", "content": "hi\n"}), mctx)
    assert (preview.path, preview.old_text, preview.new_text) == (str(root / "n.txt"), None, "hi\n")
    assert preview.unified_diff == "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+hi\n"
    assert not (root / "n.txt").exists()


async def test_overwrite_without_a_read_is_refused(mctx: ToolContext, write, root: Path) -> None:
    write({"notes.md": "precious\n"})
    with pytest.raises(ToolError) as caught:
        await WRITE.call({"path": "notes.md", "content": "gone\n"}, mctx)
    assert str(caught.value) == "read 'notes.md' before overwriting it (read_file), so its current content is not lost"
    assert (root / "notes.md").read_text() == "precious\n"


async def test_overwrite_after_a_read_shows_the_applied_diff(mctx: ToolContext, write, root: Path) -> None:
    write({"notes.md": "one\ntwo\n"})
    await read(mctx, "notes.md")
    result = await WRITE.call({"path": "notes.md", "content": "one\n2\n"}, mctx)
    assert (root / "notes.md").read_text() == "one\n2\n"
    assert result.text == (
        "Overwrote notes.md: +1 -1 lines.\n\nApplied diff:\n"
        "--- a/notes.md\n+++ b/notes.md\n@@ -1,2 +1,2 @@\n one\n-two\n+2"
    )


async def test_stale_read_is_refused_after_the_file_changes_on_disk(mctx: ToolContext, write, root: Path) -> None:
    write({"a.py": "x = 1\n"})
    await read(mctx, "a.py")
    (root / "a.py").write_text("x = 1\ny = 2\n")  # someone else edits it
    for call in (
        WRITE.call({"path": "a.py", "content": "z\n"}, mctx),
        EDIT.call({"path": "a.py", "edits": [edit("x = 1", "x = 3")]}, mctx),
    ):
        with pytest.raises(ToolError, match=r"^'a.py' changed since you read it, read it again$"):
            await call
    assert (root / "a.py").read_text() == "x = 1\ny = 2\n"
    await read(mctx, "a.py")
    await EDIT.call({"path": "a.py", "edits": [edit("x = 1", "x = 3")]}, mctx)
    assert (root / "a.py").read_text() == "x = 3\ny = 2\n"


async def test_write_refusals_name_the_path_and_the_fix(mctx: ToolContext, write) -> None:
    write({"dir/f.txt": "", "plain": "file\n"})
    with pytest.raises(ToolError, match=r"'dir' is a directory; write_file needs a file path such as 'dir/name.txt'"):
        await WRITE.call({"path": "dir", "content": "x"}, mctx)
    with pytest.raises(ToolError, match=r"cannot create 'plain/sub/x.txt': 'plain' is a file, not a directory"):
        await WRITE.call({"path": "plain/sub/x.txt", "content": "x"}, mctx)
    await read(mctx, "plain")
    with pytest.raises(ToolError, match=r"'plain' already has exactly this content; nothing to write"):
        await WRITE.call({"path": "plain", "content": "file\n"}, mctx)


async def test_edit_applies_several_edits_in_order_and_writes_once(mctx: ToolContext, write, root: Path) -> None:
    write({"app.py": "def f():\n    return 1\n\ndef g():\n    return 2\n"})
    await read(mctx, "app.py")
    edits = [edit("return 1", "return 10"), edit("return 10", "return 11"), edit("def g", "def h")]
    result = await EDIT.call({"path": "app.py", "edits": edits}, mctx)
    assert (root / "app.py").read_text() == "def f():\n    return 11\n\ndef h():\n    return 2\n"
    assert result.text.startswith(
        "Edited app.py (3 edits): +2 -2 lines.\n\nApplied diff:\n--- a/app.py\n+++ b/app.py\n"
    )
    assert result.locations[0].line == 1


async def test_one_bad_edit_leaves_the_file_unchanged(mctx: ToolContext, write, root: Path) -> None:
    write({"app.py": "alpha\nbeta\n"})
    await read(mctx, "app.py")
    with pytest.raises(ToolError) as caught:
        await EDIT.call({"path": "app.py", "edits": [edit("alpha", "ALPHA"), edit("gamma", "GAMMA")]}, mctx)
    assert str(caught.value) == (
        "edit 2 of 2: old_text not found in app.py (check whitespace and indentation; read the file again)"
        "; no edits were applied"
    )
    assert (root / "app.py").read_text() == "alpha\nbeta\n"


async def test_ambiguous_match_and_replace_all(mctx: ToolContext, write, root: Path) -> None:
    write({"x.txt": "a = 1\na = 1\na = 1\n"})
    await read(mctx, "x.txt")
    with pytest.raises(ToolError) as caught:
        await EDIT.call({"path": "x.txt", "edits": [edit("a = 1", "a = 2")]}, mctx)
    assert str(caught.value) == (
        "old_text matches 3 times in x.txt; add surrounding lines to make it unique or set replace_all"
    )
    await EDIT.call({"path": "x.txt", "edits": [edit("a = 1", "a = 2", replace_all=True)]}, mctx)
    assert (root / "x.txt").read_text() == "a = 2\na = 2\na = 2\n"


async def test_overlapping_occurrences_count_as_ambiguous(mctx: ToolContext, write) -> None:
    write({"x.txt": "aaa\n"})
    await read(mctx, "x.txt")
    with pytest.raises(ToolError, match=r"old_text matches 2 times in x\.txt"):
        await EDIT.call({"path": "x.txt", "edits": [edit("aa", "b")]}, mctx)


async def test_edit_refusals(mctx: ToolContext, write) -> None:
    write({"a.py": "    pass\n", "unread.py": "x\n"})
    await read(mctx, "a.py")
    cases = [
        ("a.py", edit("", "x"), "old_text is empty in a.py; include the lines around the insertion point"),
        ("a.py", edit("pass", "pass"), "old_text and new_text are identical, so nothing would change in a.py"),
        ("gone.py", edit("a", "b"), "no such file 'gone.py'; use write_file to create it"),
        (
            "unread.py",
            edit("x", "y"),
            r"read 'unread.py' before editing it \(read_file\), so the edit matches its current text",
        ),
        ("a.py", edit("pass\n    pass", "x"), r"old_text not found in a.py \(check whitespace"),
    ]
    for path, one, message in cases:
        with pytest.raises(ToolError, match=message):
            await EDIT.call({"path": path, "edits": [one]}, mctx)


async def test_whitespace_only_differences_get_a_hint(mctx: ToolContext, write) -> None:
    write({"a.py": "def f():\n\treturn 1\n"})  # tabs, where the model assumed spaces
    await read(mctx, "a.py")
    with pytest.raises(ToolError, match="text that differs only in whitespace starts at line 2"):
        await EDIT.call({"path": "a.py", "edits": [edit("    return 1", "    return 2")]}, mctx)


async def test_crlf_files_match_lf_old_text_and_keep_crlf(mctx: ToolContext, write, root: Path) -> None:
    write({"win.txt": "one\r\ntwo\r\nthree\r\n"})
    await read(mctx, "win.txt")
    await EDIT.call({"path": "win.txt", "edits": [edit("one\ntwo\n", "one\n2\n")]}, mctx)
    assert (root / "win.txt").read_bytes() == b"one\r\n2\r\nthree\r\n"


async def test_a_change_while_waiting_for_approval_is_never_overwritten(mctx: ToolContext, write, root: Path) -> None:
    write({"a.py": "v1\n"})
    await read(mctx, "a.py")
    args = {"path": "a.py", "edits": [edit("v1", "v2")]}
    previews = await EDIT.preview(validate_args(EDIT, args), mctx)
    (root / "a.py").write_text("user typed this\n")
    with pytest.raises(
        ToolError, match=r"'a\.py' changed while the change was waiting for approval; nothing was written"
    ):
        await EDIT.apply(validate_args(EDIT, args), mctx, previews)
    assert (root / "a.py").read_text() == "user typed this\n"


async def test_no_file_io_means_no_changes(sandbox: WorkspaceSandbox) -> None:
    with pytest.raises(ToolError, match="write_file: changing files is not available in this session"):
        await WRITE.call({"path": "a", "content": "b"}, ToolContext(sandbox))
