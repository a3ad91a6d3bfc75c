"""grep: the ripgrep and pure-Python backends give identical results over the same workspace.

rg comes from the `ripgrep` test dependency; the rg tests fail (not skip) without it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest

from tether.tools.base import ToolContext, ToolError, ToolLocation, ToolResult
from tether.tools.grep import GrepTool
from tether.tools.grep_rg import find_rg

if TYPE_CHECKING:
    from pathlib import Path

BACKENDS = ["rg", "python"]


@pytest.fixture
def project(write, root: Path, outside: Path) -> None:
    write(
        {
            ".gitignore": "build/\n*.log\n",
            "src/.gitignore": "*.gen.py\n/local.txt\n",
            "src/app.py": "def foo():\n    return bar(1)\n\nclass Foo:\n    pass\n",
            "src/util.py": "from app import foo\nFOO = 42\n",
            "src/x.gen.py": "foo generated\n",
            "src/local.txt": "foo local\n",
            "src/deep/local.txt": "foo deep local\n",
            "build/out.js": "foo()\n",
            "debug.log": "foo in a log\n",
            ".hidden/notes.md": "foo hidden\n",
            ".env": "FOO=1\n",
            ".git/config": "[foo]\n",
            "image.bin": b"\x89PNG\x00\x01foo\x00",
            "late-nul.dat": b"foo\n" + b"x" * 9000 + b"\x00\n",
            "crlf.txt": b"foo\r\nbar foo\r\n",
            "bom.txt": b"\xef\xbb\xbffoo first\n",
            "latin1.txt": b"caf\xe9 foo\n",
            "docs/readme.md": "Nothing here.\nThe word food.\nRun it with -v to see more.\n",
        }
    )
    (outside / "foo.txt").write_text("foo outside\n")
    (root / "alias.py").symlink_to("src/app.py")
    (root / "leak.txt").symlink_to(outside / "foo.txt")
    (root / "linkdir").symlink_to(root / "src", target_is_directory=True)
    (root / "leakdir").symlink_to(outside, target_is_directory=True)
    os.mkfifo(root / "pipe")  # must be skipped, or both backends would block on it


async def grep(backend: str, ctx: ToolContext, **args: Any) -> ToolResult:
    return await GrepTool(backend=backend).call(args, ctx)  # type: ignore[arg-type]


def test_rg_is_installed_for_the_tests() -> None:
    assert find_rg() is not None, "rg is a test dependency: pip install ripgrep"
    assert GrepTool().rg_binary() == find_rg()  # "auto" prefers rg when it is there


@pytest.mark.parametrize("backend", BACKENDS)
async def test_search_output_lists_hits_sorted_then_a_summary(backend: str, ctx: ToolContext, project: None) -> None:
    result = await grep(backend, ctx, pattern="foo")
    assert result.text == "\n".join(
        [
            ".hidden/notes.md:1:foo hidden",
            "alias.py:1:def foo():",
            "bom.txt:1:foo first",
            "crlf.txt:1:foo",
            "crlf.txt:2:bar foo",
            "docs/readme.md:2:The word food.",
            "late-nul.dat:1:foo",
            "latin1.txt:1:caf\ufffd foo",
            "src/app.py:1:def foo():",
            "src/deep/local.txt:1:foo deep local",
            "src/util.py:1:from app import foo",
            "11 matches in 10 files",
        ]
    )
    root = ctx.sandbox.root
    assert result.locations[0] == ToolLocation(str(root / ".hidden/notes.md"), 1)
    assert result.locations[4] == ToolLocation(str(root / "crlf.txt"), 2)


# (arguments, the first output line): both backends must agree, and not merely on nothing
EQUIVALENCE_CASES: list[tuple[dict[str, Any], str]] = [
    ({"pattern": "foo"}, ".hidden/notes.md:1:foo hidden"),
    ({"pattern": "foo", "ignore_case": True}, ".env:1:FOO=1"),
    ({"pattern": r"^def \w+\("}, "alias.py:1:def foo():"),
    ({"pattern": r"\bfoo\b", "path": "src"}, "src/app.py:1:def foo():"),
    ({"pattern": "foo", "glob": "*.py"}, "alias.py:1:def foo():"),
    ({"pattern": "foo", "glob": "src/**/*.txt"}, "src/deep/local.txt:1:foo deep local"),
    ({"pattern": "foo", "max_results": 3}, ".hidden/notes.md:1:foo hidden"),
    ({"pattern": "foo$"}, "late-nul.dat:1:foo"),
    ({"pattern": "[0-9]+"}, ".env:1:FOO=1"),
    ({"pattern": "^$"}, "alias.py:3:"),
    ({"pattern": "foo", "path": "build"}, "build/out.js:1:foo()"),
    ({"pattern": "foo", "path": "debug.log"}, "debug.log:1:foo in a log"),
    ({"pattern": "foo", "path": "image.bin"}, "no matches for 'foo' in 'image.bin' (searched 1 file)"),
    ({"pattern": "-v"}, "docs/readme.md:3:Run it with -v to see more."),
    ({"pattern": "zzz_nothing"}, "no matches for 'zzz_nothing' (searched 14 files)"),
]


@pytest.mark.parametrize(("args", "first_line"), EQUIVALENCE_CASES, ids=lambda case: repr(case))
async def test_rg_and_python_backends_give_identical_results(
    args: dict[str, Any], first_line: str, ctx: ToolContext, project: None
) -> None:
    with_rg = await grep("rg", ctx, **args)
    with_python = await grep("python", ctx, **args)
    assert with_rg.text == with_python.text
    assert with_rg.locations == with_python.locations
    assert with_rg.text.splitlines()[0] == first_line


async def test_cap_keeps_the_first_hits_in_path_order_for_both_backends(ctx: ToolContext, write) -> None:
    write({f"pkg/m{n:02d}.py": "".join(f"hit {i}\n" for i in range(20)) for n in range(40)})
    results = [await grep(backend, ctx, pattern="hit", max_results=25) for backend in BACKENDS]
    assert results[0].text == results[1].text
    lines = results[0].text.splitlines()
    assert lines[0] == "pkg/m00.py:1:hit 0"
    assert lines[24] == "pkg/m01.py:5:hit 4"
    assert lines[25] == (
        "800 matches in 40 files (showing the first 25; narrow the search with path or glob, or raise max_results)"
    )
    assert len(results[0].locations) == 25


async def test_locations_are_capped_at_50(ctx: ToolContext, write) -> None:
    write({"many.txt": "x\n" * 80})
    result = await grep("python", ctx, pattern="x")
    assert len(result.locations) == 50
    assert result.text.endswith("80 matches in 1 file")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_no_matches_says_what_was_searched(backend: str, ctx: ToolContext, project: None) -> None:
    result = await grep(backend, ctx, pattern="zzz", path="src")
    assert result.text == "no matches for 'zzz' in 'src' (searched 4 files)"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_invalid_regex_names_the_pattern(backend: str, ctx: ToolContext, project: None) -> None:
    with pytest.raises(ToolError, match=r"grep: invalid regex 'foo\(bar'"):
        await grep(backend, ctx, pattern="foo(bar")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_invalid_regex_is_reported_even_with_nothing_to_search(backend: str, ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"invalid regex '\['"):
        await grep(backend, ctx, pattern="[")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_bad_path_or_glob_is_refused(backend: str, ctx: ToolContext, project: None) -> None:
    with pytest.raises(ToolError, match="no such file or directory 'nope'"):
        await grep(backend, ctx, pattern="foo", path="nope")
    with pytest.raises(ToolError, match="outside the workspace"):
        await grep(backend, ctx, pattern="foo", path="leakdir")
    with pytest.raises(ToolError, match=r"grep: glob '\.\./\*' uses '\.\.'"):
        await grep(backend, ctx, pattern="foo", glob="../*")


def test_title_and_locations_before_running(ctx: ToolContext) -> None:
    tool = GrepTool()
    assert tool.title_for({"pattern": "foo", "path": "src", "glob": "*.py"}) == "Search 'foo' in src (*.py)"
    assert tool.locations_for({"pattern": "foo"}, ctx.sandbox) == []
    assert tool.locations_for({"pattern": "foo", "path": "src"}, ctx.sandbox) == [
        ToolLocation(str(ctx.sandbox.root / "src"))
    ]


@pytest.mark.parametrize("setting,reached", [("off", True), ("bwrap", False)])
async def test_rg_runs_in_the_sandbox_of_the_calls_own_setting(
    ctx: ToolContext, root: Path, setting: str, reached: bool
) -> None:
    """`ToolContext.sandbox_setting` (the calling connection's) decides, not a process default:
    a link through this process's /proc entry reaches the file only outside bubblewrap's
    pid namespace."""
    (root / "real.txt").write_text("needle\n")
    (root / "through_proc.txt").symlink_to(f"/proc/{os.getpid()}/root{os.path.realpath(root)}/real.txt")
    ctx.sandbox_setting = setting
    result = await GrepTool(backend="rg").call({"pattern": "needle"}, ctx)
    assert "real.txt:1:needle" in result.text, result.text
    assert ("through_proc.txt:1:needle" in result.text) is reached, result.text
