"""delete_path and move_path: happy paths, symlinks acted on themselves, and refusals."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from tether.tools.base import ToolContext, ToolError, validate_args
from tether.tools.delete_path import DeletePathTool
from tether.tools.disk_io import DiskFileIO
from tether.tools.edit_file import EditFileTool
from tether.tools.ledger import ContentLedger
from tether.tools.move_path import MovePathTool
from tether.tools.read_file import ReadFileTool

if TYPE_CHECKING:
    from pathlib import Path

    from tether.tools.sandbox import WorkspaceSandbox

DELETE, MOVE = DeletePathTool(), MovePathTool()


@pytest.fixture
def mctx(sandbox: WorkspaceSandbox) -> ToolContext:
    return ToolContext(sandbox, call_id="t", files=DiskFileIO(sandbox), reads=ContentLedger(sandbox))


async def test_delete_a_file_shows_its_text_and_forgets_the_read(mctx: ToolContext, write, root: Path) -> None:
    write({"old.py": "bye\n"})
    await ReadFileTool().call({"path": "old.py"}, mctx)
    (preview,) = await DELETE.preview(validate_args(DELETE, {"path": "old.py"}), mctx)
    assert (preview.old_text, preview.new_text) == ("bye\n", None)
    assert preview.unified_diff == "--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
    result = await DELETE.apply(validate_args(DELETE, {"path": "old.py"}), mctx, [preview])
    assert result.text.startswith("Deleted old.py.\n\nApplied diff:\n--- a/old.py")
    assert not (root / "old.py").exists()
    write({"old.py": "bye\n"})  # recreated: the earlier read no longer counts
    with pytest.raises(ToolError, match=r"read 'old\.py' before editing it"):
        await EditFileTool().call({"path": "old.py", "edits": [{"old_text": "bye", "new_text": "hi"}]}, mctx)


async def test_a_file_edited_during_approval_is_not_deleted(mctx: ToolContext, write, root: Path) -> None:
    write({"a.txt": "v1\n"})
    previews = await DELETE.preview(validate_args(DELETE, {"path": "a.txt"}), mctx)
    (root / "a.txt").write_text("v2\n")
    with pytest.raises(ToolError, match=r"'a\.txt' changed while the deletion was waiting for approval"):
        await DELETE.apply(validate_args(DELETE, {"path": "a.txt"}), mctx, previews)
    assert (root / "a.txt").read_text() == "v2\n"


async def test_delete_needs_no_read_and_handles_binary_files(mctx: ToolContext, write, root: Path) -> None:
    write({"img.png": b"\x89PNG\0\0"})
    (preview,) = await DELETE.preview(validate_args(DELETE, {"path": "img.png"}), mctx)
    assert preview.old_text is None and "file deleted" in preview.unified_diff
    await DELETE.apply(validate_args(DELETE, {"path": "img.png"}), mctx, [preview])
    assert not (root / "img.png").exists()


async def test_directories_need_recursive_unless_empty(mctx: ToolContext, write, root: Path) -> None:
    write({"build/a.o": "x", "build/sub/b.o": "y"})
    (root / "empty").mkdir()
    with pytest.raises(ToolError) as caught:
        await DELETE.call({"path": "build"}, mctx)
    assert str(caught.value) == (
        "'build' is a directory that is not empty (2 files); set recursive: true to delete it "
        "and everything in it, or delete single files"
    )
    (preview,) = await DELETE.preview(validate_args(DELETE, {"path": "build", "recursive": True}), mctx)
    assert preview.old_text is None and "deleted with the 2 files in it" in preview.unified_diff
    result = await DELETE.apply(validate_args(DELETE, {"path": "build", "recursive": True}), mctx, [preview])
    assert result.text.startswith("Deleted directory build.")
    await DELETE.call({"path": "empty"}, mctx)
    assert sorted(os.listdir(root)) == []


async def test_delete_refuses_the_root_and_missing_paths(mctx: ToolContext, root: Path) -> None:
    for spelling in (".", str(root), "sub/.."):
        with pytest.raises(ToolError, match="refusing to delete the workspace root"):
            await DELETE.call({"path": spelling, "recursive": True}, mctx)
    with pytest.raises(ToolError, match=r"no such file or directory 'nope.txt'; nothing to delete \(list_dir"):
        await DELETE.call({"path": "nope.txt"}, mctx)


async def test_deleting_a_symlink_keeps_its_target(mctx: ToolContext, write, root: Path) -> None:
    write({"real/data.txt": "keep\n"})
    (root / "link").symlink_to("real")
    (root / "flink").symlink_to("real/data.txt")
    await DELETE.call({"path": "link"}, mctx)
    await DELETE.call({"path": "flink"}, mctx)
    assert (root / "real/data.txt").read_text() == "keep\n"
    assert sorted(os.listdir(root)) == ["real"]


async def test_move_renames_creates_parents_and_carries_the_read(mctx: ToolContext, write, root: Path) -> None:
    write({"a.py": "x = 1\n"})
    await ReadFileTool().call({"path": "a.py"}, mctx)
    args = validate_args(MOVE, {"source": "a.py", "destination": "pkg/sub/b.py"})
    (preview,) = await MOVE.preview(args, mctx)
    assert preview.move_to == str(root / "pkg/sub/b.py")
    assert preview.unified_diff == "rename from a.py\nrename to pkg/sub/b.py\n"
    result = await MOVE.apply(args, mctx, [preview])
    assert result.text == "Moved a.py to pkg/sub/b.py."
    assert (root / "pkg/sub/b.py").read_text() == "x = 1\n" and not (root / "a.py").exists()
    await EditFileTool().call({"path": "pkg/sub/b.py", "edits": [{"old_text": "1", "new_text": "2"}]}, mctx)
    assert (root / "pkg/sub/b.py").read_text() == "x = 2\n"


async def test_move_refuses_an_existing_destination_unless_overwrite(mctx: ToolContext, write, root: Path) -> None:
    write({"a.txt": "new\n", "b.txt": "old\n", "dir/x": ""})
    with pytest.raises(ToolError) as caught:
        await MOVE.call({"source": "a.txt", "destination": "b.txt"}, mctx)
    assert (
        str(caught.value) == "'b.txt' already exists; set overwrite: true to replace it, or choose another destination"
    )
    with pytest.raises(ToolError, match=r"'dir' is an existing directory; give the full new path, e.g. 'dir/a.txt'"):
        await MOVE.call({"source": "a.txt", "destination": "dir", "overwrite": True}, mctx)
    args = validate_args(MOVE, {"source": "a.txt", "destination": "b.txt", "overwrite": True})
    previews = await MOVE.preview(args, mctx)
    assert [(p.path, p.old_text, p.new_text) for p in previews][1] == (str(root / "b.txt"), "old\n", "new\n")
    result = await MOVE.apply(args, mctx, previews)
    assert result.text.startswith("Moved a.txt to b.txt. The previous b.txt was replaced.")
    assert (root / "b.txt").read_text() == "new\n" and not (root / "a.txt").exists()


async def test_move_refusals(mctx: ToolContext, write, root: Path) -> None:
    write({"d/f.txt": "", "g.txt": ""})
    cases = [
        ({"source": "nope", "destination": "x"}, r"no such file or directory 'nope'; nothing to move"),
        ({"source": "g.txt", "destination": "./g.txt"}, r"source and destination are the same path \('g.txt'\)"),
        ({"source": "d", "destination": "d/inner"}, r"cannot move directory 'd' into itself \('d/inner'\)"),
        ({"source": ".", "destination": "x"}, "cannot move the workspace root"),
        ({"source": "g.txt", "destination": "d/f.txt/x"}, r"cannot create 'd/f.txt/x': 'd/f.txt' is a file"),
    ]
    for args, message in cases:
        with pytest.raises(ToolError, match=message):
            await MOVE.call(args, mctx)


async def test_a_destination_that_appears_during_approval_is_not_clobbered(
    mctx: ToolContext, write, root: Path
) -> None:
    write({"a.txt": "mine\n"})
    args = validate_args(MOVE, {"source": "a.txt", "destination": "b.txt"})
    previews = await MOVE.preview(args, mctx)
    (root / "b.txt").write_text("theirs\n")
    with pytest.raises(ToolError, match=r"'b\.txt' appeared while the move was waiting for approval"):
        await MOVE.apply(args, mctx, previews)
    assert (root / "b.txt").read_text() == "theirs\n" and (root / "a.txt").exists()


async def test_moving_a_symlink_moves_the_link(mctx: ToolContext, write, root: Path) -> None:
    write({"target.txt": "t\n"})
    (root / "ln").symlink_to("target.txt")
    await MOVE.call({"source": "ln", "destination": "ln2"}, mctx)
    assert (root / "ln2").is_symlink() and (root / "target.txt").read_text() == "t\n"


def test_titles_and_locations(sandbox: WorkspaceSandbox, root: Path) -> None:
    assert MOVE.title_for({"source": "a", "destination": "b"}) == "Move a → b"
    assert MOVE.title_for({"source": "a", "destination": 3}) == "Move path"
    assert DELETE.title_for({"path": "x", "recursive": "yes"}) == "Delete x"  # a bad optional is left out
    assert DELETE.title_for({}) == "Delete path"
    found = MOVE.locations_for({"source": "a", "destination": "b/c"}, sandbox)
    assert [loc.path for loc in found] == [str(root / "a"), str(root / "b/c")]
    found = MOVE.locations_for({"source": "../x", "destination": "b"}, sandbox)
    assert [loc.path for loc in found] == [str(root / "b")]
    assert MOVE.locations_for({"source": "../x", "destination": 3}, sandbox) == []
