"""list_dir: sorted, gitignore-aware listings with directories marked."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from tether.tools.base import ToolContext, ToolError
from tether.tools.list_dir import ListDirTool

if TYPE_CHECKING:
    from pathlib import Path

TOOL = ListDirTool()


@pytest.fixture
def project(write, root: Path) -> None:
    write(
        {
            ".gitignore": "build/\n*.log\n",
            "README.md": "# hi\n",
            "debug.log": "",
            "build/out.js": "",
            "src/app.py": "",
            "src/util/strings.py": "",
            "src/.env.example": "",
            ".git/HEAD": "ref: refs/heads/main\n",
        }
    )


async def test_lists_entries_sorted_with_directories_marked(ctx: ToolContext, project: None) -> None:
    text = (await TOOL.call({}, ctx)).text
    assert text == ".gitignore\nREADME.md\nsrc/\n[2 gitignored entries not shown]"


async def test_depth_lists_nested_entries_with_workspace_relative_paths(ctx: ToolContext, project: None) -> None:
    text = (await TOOL.call({"path": "src", "depth": 2}, ctx)).text
    assert text == "src/.env.example\nsrc/app.py\nsrc/util/\nsrc/util/strings.py"


async def test_an_explicitly_named_ignored_directory_is_listed(ctx: ToolContext, project: None) -> None:
    assert (await TOOL.call({"path": "build"}, ctx)).text == "build/out.js"


async def test_empty_directory_says_so(ctx: ToolContext, root: Path) -> None:
    (root / "empty").mkdir()
    assert (await TOOL.call({"path": "empty"}, ctx)).text == "(empty directory)"


async def test_symlinks_show_where_they_point(ctx: ToolContext, write, root: Path, outside: Path) -> None:
    write({"real/a.txt": ""})
    (root / "inner").symlink_to("real", target_is_directory=True)
    (root / "leak").symlink_to(outside)
    (root / "dangling").symlink_to("missing.txt")
    lines = (await TOOL.call({"depth": 2}, ctx)).text.splitlines()
    assert lines == [
        "dangling -> (broken link)",
        "inner -> real/",
        "leak -> (outside the workspace)",
        "real/",
        "real/a.txt",
    ]


async def test_listing_is_capped_at_1000_entries(ctx: ToolContext, root: Path) -> None:
    many = root / "many"
    many.mkdir()
    for n in range(1005):
        (many / f"f{n:04d}").touch()
    lines = (await TOOL.call({"path": "many"}, ctx)).text.splitlines()
    assert len(lines) == 1001
    assert lines[999] == "many/f0999"
    assert lines[-1].startswith("[5 more entries not shown (showing 1000 of 1005);")


async def test_file_path_points_to_read_file(ctx: ToolContext, project: None) -> None:
    with pytest.raises(ToolError, match=r"'README.md' is a file, not a directory; use read_file"):
        await TOOL.call({"path": "README.md"}, ctx)


async def test_missing_directory_is_named(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"no such directory 'nope'"):
        await TOOL.call({"path": "nope"}, ctx)


async def test_depth_above_five_is_refused(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"'depth' must be an integer between 1 and 5, got 6"):
        await TOOL.call({"depth": 6}, ctx)


async def test_symlinked_directory_outside_cannot_be_listed(ctx: ToolContext, root: Path, outside: Path) -> None:
    os.symlink(outside, root / "leak")
    with pytest.raises(ToolError, match="outside the workspace"):
        await TOOL.call({"path": "leak"}, ctx)


async def test_a_gitignore_pattern_built_to_backtrack_cannot_freeze_the_listing(ctx: ToolContext, root: Path) -> None:
    # a cloned repository's trap: `*a*a…*ab` against a long name of `a`s would take minutes
    # (and hold the GIL, freezing the whole daemon); such a pattern is left out
    (root / ".gitignore").write_text("*a" * 14 + "b\n*.log\nbuild/**/*.min.*\n")
    (root / ("a" * 200)).write_text("x\n")
    (root / "debug.log").write_text("x\n")
    (root / "keep.txt").write_text("x\n")
    listing = (await ListDirTool().call({"path": "."}, ctx)).text
    assert "a" * 200 in listing and "keep.txt" in listing
    assert "debug.log" not in listing  # the ordinary patterns still apply
