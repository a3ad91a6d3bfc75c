"""What bubblewrap keeps read-only inside the writable workspace besides the `.git` entry
(issue 30 items 6 and 8): the git directory a `.git` link or `gitdir:` file names in the
workspace (hooks, config), a worktree's `commondir` there, and `.tether/`. Real commands,
real bubblewrap, real git. (Landlock cannot protect a subdirectory: SPEC says so.)
"""

from __future__ import annotations

import subprocess
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from tether.sandbox import choose_sandbox
from tether.tools.run_command import RunCommandTool

if TYPE_CHECKING:
    from pathlib import Path

    from tether.tools.base import ToolContext

TOOL = RunCommandTool()
# a command that tries to leave something the user's next git command would run
PLANT = (
    'G=$(git rev-parse --git-common-dir) && D=$(git rev-parse --git-dir) && echo "dirs $G $D"; '
    "printf '[core]\\n\\tfsmonitor = touch /tmp/x\\n' >> $G/config; "
    "printf '#!/bin/sh\\n' > $G/hooks/pre-commit; printf '#!/bin/sh\\n' > $D/hooks/pre-commit; "
    'R=$(cd "$G" && pwd -P) && mv "$R" "$R.moved" && echo MOVED-IT; echo wrote > elsewhere.txt; echo done'
)


@pytest.fixture
def bwrap_ctx(ctx: ToolContext) -> ToolContext:
    choice = choose_sandbox("bwrap")
    assert choice.sandbox is not None, choice.reason
    return replace(ctx, command_sandbox=choice)


def _git(where: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=where, check=True, capture_output=True
    )


def _files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def _repository(where: Path) -> None:
    where.mkdir(parents=True, exist_ok=True)
    (where / "a.txt").write_text("hi\n")
    _git(where, "init", "-q")
    _git(where, "add", "a.txt")
    _git(where, "commit", "-qm", "first")


async def _attack(ctx: ToolContext, root: Path, real_git: Path) -> str:
    before = _files(real_git)
    text = (await TOOL.call({"command": PLANT}, ctx)).text
    assert "done" in text and "MOVED-IT" not in text, text
    assert _files(real_git) == before, f"the git directory {real_git} was written"
    assert (root / "elsewhere.txt").read_text() == "wrote\n"  # the rest of the workspace stays writable
    return text


async def test_a_git_link_to_a_workspace_folder_keeps_that_folder_read_only(bwrap_ctx: ToolContext, root: Path):
    _repository(root)
    (root / ".git").rename(root / "store")
    (root / ".git").symlink_to("store")
    text = await _attack(bwrap_ctx, root, root / "store")
    assert "Read-only file system" in text, text
    # (the link itself is no mount point: a command may remove it, as it may create a
    # `.git` where there was none; the directory it named is what git runs from)


async def test_a_gitdir_file_into_the_workspace_keeps_that_directory_read_only(bwrap_ctx: ToolContext, root: Path):
    _repository(root)
    (root / ".git").rename(root / "meta")
    (root / ".git").write_text("gitdir: meta\n")
    text = await _attack(bwrap_ctx, root, root / "meta")
    assert "Read-only file system" in text, text


async def test_a_worktrees_git_dir_and_commondir_in_the_workspace_are_read_only(bwrap_ctx: ToolContext, root: Path):
    """The workspace is a worktree whose git directory and `commondir` (the main
    repository's `.git`) are both workspace folders."""
    _repository(root / "main")
    _git(root / "main", "worktree", "add", "-q", str(root / "tree"))
    (root / ".git").write_text("gitdir: main/.git/worktrees/tree\n")
    text = await _attack(bwrap_ctx, root, root / "main" / ".git")
    assert f"dirs {root}/main/.git" in text or "dirs main/.git" in text, text


async def test_the_workspace_tether_folder_is_read_only(bwrap_ctx: ToolContext, root: Path):
    tether = root / ".tether"
    tether.mkdir()
    (tether / "config.toml").write_text('mode = "ask"\n')
    (tether / "MEMORY.md").write_text("remember\n")
    command = (
        "echo '[[hooks.pre_tool]]' >> .tether/config.toml; echo planted > .tether/MEMORY.md; "
        "touch .tether/new; mv .tether .tether-moved && echo MOVED-IT; rm -rf .tether; echo done; exit 1"
    )
    text = (await TOOL.call({"command": command}, bwrap_ctx)).text
    assert "done" in text and "MOVED-IT" not in text and "Read-only file system" in text, text
    assert _files(tether) == {"config.toml": b'mode = "ask"\n', "MEMORY.md": b"remember\n"}
    assert "`.tether/` (this workspace's Tether config, hooks and memory) is read-only" in text, text
