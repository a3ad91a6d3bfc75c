"""Over-long paths get a clear tool error from every path-taking tool, before anything
touches the filesystem; a deep path within the limits works (no RecursionError)."""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING, Any

import pytest

from tether.tools.base import ToolContext, ToolError
from tether.tools.disk_io import DiskFileIO
from tether.tools.ledger import ContentLedger
from tether.tools.mutating import default_mutating_tools
from tether.tools.registry import default_read_only_tools
from tether.tools.sandbox import NAME_MAX, PATH_MAX, SandboxError, WorkspaceSandbox

if TYPE_CHECKING:
    from pathlib import Path

TOOLS = {tool.name: tool for tool in [*default_read_only_tools(), *default_mutating_tools()]}
LONG = "a/" * 3000  # 6,000 characters
LONG_NAME = "n" * 300
EDIT = [{"old_text": "a", "new_text": "b"}]


@pytest.fixture
def mctx(sandbox: WorkspaceSandbox) -> ToolContext:
    return ToolContext(sandbox, call_id="t", files=DiskFileIO(sandbox), reads=ContentLedger(sandbox))


def calls(path: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("read_file", {"path": path}),
        ("list_dir", {"path": path}),
        ("glob", {"pattern": "*.py", "path": path}),
        ("grep", {"pattern": "x", "path": path}),
        ("write_file", {"path": path, "content": "x"}),
        ("edit_file", {"path": path, "edits": EDIT}),
        ("delete_path", {"path": path, "recursive": True}),
        ("move_path", {"source": path, "destination": "b.txt"}),
        ("move_path", {"source": "a.txt", "destination": path}),
    ]


@pytest.mark.parametrize(("name", "args"), calls(LONG), ids=lambda v: v if isinstance(v, str) else "")
async def test_a_6000_character_path_is_a_clear_tool_error(
    mctx: ToolContext, write, root: Path, name: str, args: dict[str, Any]
) -> None:
    write({"a.txt": "a\n"})
    with pytest.raises(SandboxError) as caught:
        await TOOLS[name].call(args, mctx)
    assert str(caught.value) == (
        "path is too long (6000 characters; paths are limited to 4096 and each name to 255); use a shorter path"
    )
    assert sorted(os.listdir(root)) == ["a.txt"]


@pytest.mark.parametrize(
    ("name", "args"), calls(f"src/{LONG_NAME}/x.py"), ids=lambda v: v if isinstance(v, str) else ""
)
async def test_a_name_longer_than_255_is_a_clear_tool_error(
    mctx: ToolContext, write, root: Path, name: str, args: dict[str, Any]
) -> None:
    write({"a.txt": "a\n"})
    with pytest.raises(SandboxError) as caught:
        await TOOLS[name].call(args, mctx)
    assert str(caught.value) == (
        f"path has a name that is too long (300 characters: {'n' * 40!r}...; paths are limited to 4096 "
        "and each name to 255); use a shorter name"
    )
    assert sorted(os.listdir(root)) == ["a.txt"]


def test_limits_count_utf8_bytes_and_the_workspace_root(sandbox: WorkspaceSandbox, root: Path) -> None:
    assert (PATH_MAX, NAME_MAX) == (4096, 255)
    sandbox.resolve("é" * 127)  # 254 bytes: fine
    with pytest.raises(SandboxError, match=r"\(256 bytes in UTF-8: "):
        sandbox.resolve("é" * 128)
    # within 4096 on its own, too long once joined to the workspace root
    given = "b/" * ((PATH_MAX - 2) // 2)
    with pytest.raises(SandboxError, match=rf"path is too long \(\d+ characters with the workspace root {root};"):
        sandbox.resolve(given)
    with pytest.raises(ToolError):  # lone surrogates are counted, not a crash
        sandbox.resolve("\ud800" * 100)


async def test_a_thousand_levels_within_the_limits_are_written(mctx: ToolContext, root: Path) -> None:
    deep = "d/" * 1000 + "f.txt"  # os.makedirs would recurse past Python's limit here
    try:
        result = await TOOLS["write_file"].call({"path": deep, "content": "deep\n"}, mctx)
        assert result.text.startswith("Created d/d/d/")
        assert (root / deep).read_text() == "deep\n"
        moved = "e/" * 1000 + "f.txt"
        await TOOLS["move_path"].call({"source": deep, "destination": moved}, mctx)
        assert (root / moved).read_text() == "deep\n"
    finally:
        # Python < 3.12's shutil.rmtree (pytest's tmp_path clean-up too) recurses once per
        # level, so the tree goes here, with rm, which does not.
        subprocess.run(["rm", "-rf", str(root / "d"), str(root / "e")], check=True)
