"""glob: pattern matching over the workspace, gitignore-aware and sandboxed."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tether.tools.base import ToolContext, ToolError
from tether.tools.glob_tool import GlobTool
from tether.tools.globpattern import compile_glob

if TYPE_CHECKING:
    from pathlib import Path

TOOL = GlobTool()


@pytest.fixture
def project(write) -> None:
    write(
        {
            ".gitignore": "dist/\n",
            "setup.py": "",
            "README.md": "",
            "dist/bundle.py": "",
            "src/app.py": "",
            "src/app.ts": "",
            "src/deep/er/mod.py": "",
            "src/.gitignore": "*_pb2.py\n",
            "src/api_pb2.py": "",
            ".github/workflows/ci.yml": "",
        }
    )


async def test_double_star_matches_at_any_depth_sorted_and_gitignore_aware(ctx: ToolContext, project: None) -> None:
    text = (await TOOL.call({"pattern": "**/*.py"}, ctx)).text
    assert text == "setup.py\nsrc/app.py\nsrc/deep/er/mod.py"


async def test_single_star_stays_in_one_directory_and_hints_when_empty(ctx: ToolContext, project: None) -> None:
    assert (await TOOL.call({"pattern": "*.py"}, ctx)).text == "setup.py"
    text = (await TOOL.call({"pattern": "*.ts"}, ctx)).text
    assert text.startswith("no files match '*.ts' in the workspace")
    assert "use '**/*.ts'" in text


async def test_braces_and_path_argument(ctx: ToolContext, project: None) -> None:
    text = (await TOOL.call({"pattern": "*.{py,ts}", "path": "src"}, ctx)).text
    assert text == "src/app.py\nsrc/app.ts"


async def test_hidden_directories_are_searched(ctx: ToolContext, project: None) -> None:
    assert (await TOOL.call({"pattern": "**/*.yml"}, ctx)).text == ".github/workflows/ci.yml"


async def test_literal_ignored_directory_in_the_pattern_is_searched(ctx: ToolContext, project: None) -> None:
    assert (await TOOL.call({"pattern": "dist/*.py"}, ctx)).text == "dist/bundle.py"


async def test_symlinks_outside_are_neither_followed_nor_listed(
    ctx: ToolContext, project: None, root: Path, outside: Path
) -> None:
    (root / "leakdir").symlink_to(outside, target_is_directory=True)
    (root / "leak.txt").symlink_to(outside / "secret.txt")
    (root / "alias.txt").symlink_to("README.md")
    assert (await TOOL.call({"pattern": "**/*.txt"}, ctx)).text == "alias.txt"


async def test_results_are_capped_at_1000(ctx: ToolContext, root: Path) -> None:
    for n in range(1003):
        (root / f"f{n:04d}.txt").touch()
    lines = (await TOOL.call({"pattern": "*.txt"}, ctx)).text.splitlines()
    assert len(lines) == 1001
    assert lines[-1] == "[showing 1000 of 1003 matching files; use a narrower pattern or path]"


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("/etc/*", "is absolute"),
        ("../*", "uses '..'"),
        ("", "is empty"),
        ("[z-a]", "is not a valid glob"),
    ],
)
async def test_unusable_patterns_are_refused(ctx: ToolContext, pattern: str, message: str) -> None:
    with pytest.raises(ToolError, match=f"glob: pattern .*{message}|glob: pattern is empty"):
        await TOOL.call({"pattern": pattern}, ctx)


async def test_path_outside_or_missing_is_refused(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        await TOOL.call({"pattern": "*", "path": ".."}, ctx)
    with pytest.raises(ToolError, match="no such directory 'gone'"):
        await TOOL.call({"pattern": "*", "path": "gone"}, ctx)


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("src/**/*.py", "src/a/b/c.py", True),
        ("src/**/*.py", "src/c.py", True),
        ("src/**/*.py", "lib/src/c.py", False),
        ("*.py", "a/b.py", False),
        ("?.py", "a.py", True),
        ("[!a]*.md", "b.md", True),
        ("[!a]*.md", "a.md", False),
        ("[a-c]/x", "/x", False),
        ("**", "any/thing", True),
        ("a/**", "a/b/c", True),
        ("*.{js,ts{,x}}", "app.tsx", True),
        (r"\*.txt", "*.txt", True),
        (r"\*.txt", "a.txt", False),
    ],
)
def test_glob_dialect(pattern: str, path: str, matches: bool) -> None:
    assert bool(compile_glob(pattern).fullmatch(path)) is matches
