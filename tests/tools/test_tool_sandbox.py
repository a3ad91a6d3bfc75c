"""WorkspaceSandbox: paths are confined to the workspace, and gitignore rules apply."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from tether.tools.base import ToolError
from tether.tools.sandbox import SandboxError, WorkspaceSandbox

if TYPE_CHECKING:
    from pathlib import Path


def test_relative_path_resolves_inside_the_workspace(sandbox: WorkspaceSandbox, root: Path, write) -> None:
    write({"src/app.py": "x = 1\n"})
    assert sandbox.resolve("src/app.py") == root / "src" / "app.py"
    assert sandbox.resolve(".") == root
    assert sandbox.resolve("src/../src/app.py") == root / "src" / "app.py"


def test_sandbox_errors_are_tool_errors() -> None:
    assert issubclass(SandboxError, ToolError)


@pytest.mark.parametrize("path", ["..", "../../etc/passwd", "src/../../x", "/etc/passwd"])
def test_paths_outside_the_workspace_are_refused_with_an_actionable_message(
    sandbox: WorkspaceSandbox, root: Path, path: str
) -> None:
    with pytest.raises(SandboxError) as caught:
        sandbox.resolve(path)
    message = str(caught.value)
    assert repr(path) in message
    assert f"outside the workspace {root}" in message
    assert "relative to the workspace root" in message


def test_absolute_path_inside_the_workspace_is_allowed(sandbox: WorkspaceSandbox, root: Path, write) -> None:
    write({"a.txt": "a"})
    assert sandbox.resolve(str(root / "a.txt")) == root / "a.txt"


def test_missing_paths_inside_the_workspace_are_allowed(sandbox: WorkspaceSandbox, root: Path) -> None:
    assert sandbox.resolve("not/yet/there.py") == root / "not" / "yet" / "there.py"


def test_symlinked_file_pointing_outside_is_refused(sandbox: WorkspaceSandbox, root: Path, outside: Path) -> None:
    (root / "leak.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(SandboxError) as caught:
        sandbox.resolve("leak.txt")
    assert "'leak.txt'" in str(caught.value)
    assert "symbolic link" in str(caught.value)
    assert str(outside / "secret.txt") in str(caught.value)


def test_file_under_a_symlinked_directory_pointing_outside_is_refused(
    sandbox: WorkspaceSandbox, root: Path, outside: Path
) -> None:
    (root / "linked").symlink_to(outside, target_is_directory=True)
    with pytest.raises(SandboxError, match="symbolic link"):
        sandbox.resolve("linked/secret.txt")
    with pytest.raises(SandboxError):
        sandbox.resolve("linked/new-file.txt")  # not even paths that do not exist yet


def test_symlink_inside_pointing_inside_is_allowed(sandbox: WorkspaceSandbox, root: Path, write) -> None:
    write({"real/target.txt": "hi"})
    (root / "alias").symlink_to(root / "real", target_is_directory=True)
    (root / "short.txt").symlink_to("real/target.txt")
    assert sandbox.resolve("alias/target.txt") == root / "real" / "target.txt"
    assert sandbox.resolve("short.txt") == root / "real" / "target.txt"


def test_nul_byte_and_empty_path_are_refused(sandbox: WorkspaceSandbox) -> None:
    with pytest.raises(SandboxError, match="NUL byte"):
        sandbox.resolve("a\0b")
    with pytest.raises(SandboxError, match="empty"):
        sandbox.resolve("")


def test_workspace_reached_through_a_symlink_is_resolved(tmp_path: Path, root: Path, write) -> None:
    write({"a.txt": "a"})
    link = tmp_path / "ws-link"
    link.symlink_to(root, target_is_directory=True)
    sandbox = WorkspaceSandbox(link)
    assert sandbox.root == root
    assert sandbox.resolve(str(link / "a.txt")) == root / "a.txt"


def test_relative_gives_posix_paths_and_dot_for_the_root(sandbox: WorkspaceSandbox, root: Path) -> None:
    assert sandbox.relative(root) == "."
    assert sandbox.relative(root / "src" / "a.py") == "src/a.py"
    with pytest.raises(SandboxError):
        sandbox.relative(root.parent)


def test_root_gitignore_rules_apply(sandbox: WorkspaceSandbox, write) -> None:
    write({".gitignore": "build/\n*.log\n!keep.log\n/top-only.txt\n"})
    assert sandbox.is_ignored("build", is_dir=True)
    assert sandbox.is_ignored("build/out/x.js", is_dir=False)
    assert sandbox.is_ignored("deep/er/debug.log", is_dir=False)
    assert not sandbox.is_ignored("keep.log", is_dir=False)
    assert sandbox.is_ignored("top-only.txt", is_dir=False)
    assert not sandbox.is_ignored("sub/top-only.txt", is_dir=False)
    assert not sandbox.is_ignored("build", is_dir=False)  # "build/" only matches directories
    assert not sandbox.is_ignored("src/app.py", is_dir=False)


def test_nested_gitignore_rules_are_scoped_to_their_directory(sandbox: WorkspaceSandbox, write) -> None:
    write({"pkg/.gitignore": "*.gen\n/local.txt\n", "other/x.gen": ""})
    assert sandbox.is_ignored("pkg/a.gen", is_dir=False)
    assert sandbox.is_ignored("pkg/deep/b.gen", is_dir=False)
    assert sandbox.is_ignored("pkg/local.txt", is_dir=False)
    assert not sandbox.is_ignored("pkg/deep/local.txt", is_dir=False)
    assert not sandbox.is_ignored("other/x.gen", is_dir=False)
    assert not sandbox.is_ignored("a.gen", is_dir=False)


def test_deeper_gitignore_can_re_include_what_a_parent_ignores(sandbox: WorkspaceSandbox, write) -> None:
    write({".gitignore": "*.txt\n", "docs/.gitignore": "!readme.txt\n"})
    assert sandbox.is_ignored("notes.txt", is_dir=False)
    assert not sandbox.is_ignored("docs/readme.txt", is_dir=False)
    assert sandbox.is_ignored("docs/other.txt", is_dir=False)


def test_git_directory_is_always_ignored(sandbox: WorkspaceSandbox) -> None:
    assert sandbox.is_ignored(".git", is_dir=True)
    assert sandbox.is_ignored(".git/config", is_dir=False)
    assert sandbox.is_ignored("vendor/lib/.git", is_dir=False)


def test_reload_ignores_picks_up_an_edited_gitignore(sandbox: WorkspaceSandbox, write) -> None:
    write({".gitignore": "a.txt\n"})
    assert sandbox.is_ignored("a.txt", is_dir=False)
    write({".gitignore": "b.txt\n"})
    assert sandbox.is_ignored("a.txt", is_dir=False)  # cached until reloaded
    sandbox.reload_ignores()
    assert not sandbox.is_ignored("a.txt", is_dir=False)
    assert sandbox.is_ignored("b.txt", is_dir=False)


def test_symlinked_gitignore_is_not_followed(sandbox: WorkspaceSandbox, root: Path, outside: Path) -> None:
    (outside / "rules").write_text("*\n")
    os.symlink(outside / "rules", root / ".gitignore")
    assert not sandbox.is_ignored("a.txt", is_dir=False)
