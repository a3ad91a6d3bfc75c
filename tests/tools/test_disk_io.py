"""DiskFileIO: strict text reads, atomic writes that keep mode bits, deletes and moves."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

import pytest

from tether.tools.base import ToolError
from tether.tools.disk_io import DiskFileIO, MissingFileError
from tether.tools.sandbox import SandboxError, WorkspaceSandbox

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def disk(sandbox: WorkspaceSandbox) -> DiskFileIO:
    return DiskFileIO(sandbox)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


async def test_atomic_write_keeps_mode_bits_and_leaves_no_temp_files(disk: DiskFileIO, write, root: Path) -> None:
    write({"bin/run.sh": "#!/bin/sh\necho old\n"})
    script = root / "bin" / "run.sh"
    script.chmod(0o755)
    inode = os.stat(script).st_ino
    await disk.write_text(script, "#!/bin/sh\necho new\n")
    assert script.read_text() == "#!/bin/sh\necho new\n"
    assert _mode(script) == 0o755
    assert os.stat(script).st_ino != inode  # replaced by rename, not rewritten in place
    assert os.listdir(root / "bin") == ["run.sh"]


async def test_new_files_get_0644_minus_umask_and_parent_directories(disk: DiskFileIO, root: Path) -> None:
    old_umask = os.umask(0o027)
    try:
        await disk.write_text(root / "a" / "b" / "new.txt", "hi\n")
    finally:
        os.umask(old_umask)
    assert (root / "a" / "b" / "new.txt").read_text() == "hi\n"
    assert _mode(root / "a" / "b" / "new.txt") == 0o640


async def test_writing_through_a_symlink_replaces_the_target_and_keeps_the_link(
    disk: DiskFileIO, write, root: Path
) -> None:
    write({"real.txt": "old\n"})
    (root / "link.txt").symlink_to("real.txt")
    await disk.write_text(root / "real.txt", "new\n")
    assert (root / "link.txt").is_symlink() and (root / "link.txt").read_text() == "new\n"


async def test_read_text_is_strict_utf8_and_keeps_a_bom(disk: DiskFileIO, write, root: Path) -> None:
    write({"bom.txt": b"\xef\xbb\xbfhi\r\n", "bin.dat": b"\0\1\2", "latin.txt": b"caf\xe9\n"})
    assert await disk.read_text(root / "bom.txt") == "\ufeffhi\r\n"
    for name in ("bin.dat", "latin.txt"):
        with pytest.raises(ToolError, match=f"'{name}' is a binary or non-UTF-8 file"):
            await disk.read_text(root / name)
    with pytest.raises(MissingFileError, match=r"no such file 'nope\.txt'"):
        await disk.read_text(root / "nope.txt")
    (root / "dir").mkdir()
    with pytest.raises(ToolError, match="'dir' is a directory"):
        await disk.read_text(root / "dir")


async def test_bom_survives_a_read_write_round_trip(disk: DiskFileIO, write, root: Path) -> None:
    write({"bom.txt": b"\xef\xbb\xbfa\n"})
    text = await disk.read_text(root / "bom.txt")
    await disk.write_text(root / "bom.txt", text.replace("a", "b"))
    assert (root / "bom.txt").read_bytes() == b"\xef\xbb\xbfb\n"


async def test_delete_files_trees_and_links_but_not_link_targets(disk: DiskFileIO, write, root: Path) -> None:
    write({"f.txt": "x", "tree/a/b.txt": "y", "keep/k.txt": "z"})
    (root / "ln").symlink_to("keep")
    await disk.delete(root / "f.txt")
    await disk.delete(root / "tree")
    await disk.delete(root / "ln")
    assert sorted(os.listdir(root)) == ["keep"]
    assert (root / "keep" / "k.txt").exists()
    with pytest.raises(ToolError, match="refusing to delete the workspace root"):
        await disk.delete(root)


async def test_move_creates_parents(disk: DiskFileIO, write, root: Path) -> None:
    write({"a.txt": "x"})
    await disk.move(root / "a.txt", root / "deep" / "er" / "b.txt")
    assert (root / "deep" / "er" / "b.txt").read_text() == "x"
    assert not (root / "a.txt").exists()


async def test_paths_outside_the_sandbox_are_refused(disk: DiskFileIO, outside: Path, root: Path) -> None:
    with pytest.raises(SandboxError):
        await disk.write_text(outside / "x.txt", "no")
    with pytest.raises(SandboxError):
        await disk.read_text(outside / "secret.txt")
    (root / "out").symlink_to(outside)
    with pytest.raises(SandboxError):
        await disk.write_text(root / "out" / "x.txt", "no")
    assert sorted(os.listdir(outside)) == ["secret.txt"]
