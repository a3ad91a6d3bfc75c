"""No tool deletes, moves or writes anything under a `.git` at any depth: nested
repositories, submodules and worktrees (whose `.git` is a file) included."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tether.tools.base import ToolContext, ToolError, validate_args
from tether.tools.disk_io import DiskFileIO
from tether.tools.ledger import ContentLedger
from tether.tools.mutating import default_mutating_tools
from tether.tools.read_file import ReadFileTool
from tether.tools.sandbox import WorkspaceSandbox

TOOLS = {tool.name: tool for tool in default_mutating_tools()}

REPOS = {
    "vendor/lib/.git/HEAD": "ref: refs/heads/main\n",  # a nested repository
    "vendor/lib/src/a.py": "x = 1\n",
    "mods/sub/.git": "gitdir: ../../.git/modules/sub\n",  # a submodule's (or worktree's) .git file
    "mods/sub/b.py": "y = 2\n",
    "a/b/.git/HEAD": "ref: refs/heads/main\n",
    "a/b/.git/config": "[core]\n",
    "plain/.gitignore": "*.o\n",
    "plain/.github/ci.yml": "on: push\n",
    "plain/c.txt": "c\n",
    "file.txt": "f\n",
}


@pytest.fixture
def mctx(sandbox: WorkspaceSandbox, write) -> ToolContext:
    write(REPOS)
    return ToolContext(sandbox, call_id="t", files=DiskFileIO(sandbox), reads=ContentLedger(sandbox))


def snapshot(root: Path) -> dict[str, bytes]:
    found = {}
    for base, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(base, name)
            found[os.path.relpath(path, root)] = Path(path).read_bytes()
    return found


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("write_file", {"path": "vendor/lib/.git/config", "content": "[core]\n"}),
        ("write_file", {"path": "a/b/.git/HEAD", "content": "ref: refs/heads/evil\n"}),
        ("write_file", {"path": "a/b/.git/hooks/pre-commit", "content": "#!/bin/sh\ncurl evil\n"}),
        ("write_file", {"path": "mods/sub/.git", "content": "gitdir: /tmp/elsewhere\n"}),
        ("write_file", {"path": "new/.GIT/config", "content": "x"}),
        ("edit_file", {"path": "a/b/.git/config", "edits": [{"old_text": "[core]", "new_text": "[x]"}]}),
        ("edit_file", {"path": "mods/sub/.git", "edits": [{"old_text": "gitdir", "new_text": "x"}]}),
        ("delete_path", {"path": "a/b/.git", "recursive": True}),
        ("delete_path", {"path": "a/b/.git/HEAD"}),
        ("delete_path", {"path": "mods/sub/.git"}),
        ("move_path", {"source": "file.txt", "destination": "a/b/.git/file.txt"}),
        ("move_path", {"source": "file.txt", "destination": "vendor/lib/.git/hooks/post-checkout"}),
        ("move_path", {"source": "a/b/.git", "destination": "a/b/git-backup"}),
        ("move_path", {"source": "mods/sub/.git", "destination": "mods/sub/dotgit"}),
    ],
)
async def test_a_git_component_at_any_depth_is_refused(
    mctx: ToolContext, root: Path, name: str, args: dict[str, Any]
) -> None:
    before = snapshot(root)
    with pytest.raises(ToolError) as caught:
        await TOOLS[name].call(args, mctx)
    message = str(caught.value)
    assert message.startswith("Tether does not change files under .git/ ('") and "use git commands" in message
    assert snapshot(root) == before


@pytest.mark.parametrize(
    ("name", "args", "repo", "git"),
    [
        ("delete_path", {"path": "vendor", "recursive": True}, "vendor/lib", "vendor/lib/.git"),
        ("delete_path", {"path": "vendor/lib", "recursive": True}, "vendor/lib", "vendor/lib/.git"),
        ("delete_path", {"path": "vendor"}, "vendor/lib", "vendor/lib/.git"),  # before "not empty"
        ("delete_path", {"path": "mods", "recursive": True}, "mods/sub", "mods/sub/.git"),
        ("delete_path", {"path": "a", "recursive": True}, "a/b", "a/b/.git"),
        ("move_path", {"source": "vendor", "destination": "third_party"}, "vendor/lib", "vendor/lib/.git"),
        ("move_path", {"source": "mods/sub", "destination": "sub"}, "mods/sub", "mods/sub/.git"),
        ("move_path", {"source": "a", "destination": "z/a"}, "a/b", "a/b/.git"),
    ],
)
async def test_a_directory_holding_a_repository_is_not_deleted_or_moved(
    mctx: ToolContext, root: Path, name: str, args: dict[str, Any], repo: str, git: str
) -> None:
    before = snapshot(root)
    with pytest.raises(ToolError) as caught:
        await TOOLS[name].preview(validate_args(TOOLS[name], args), mctx)
    action = "delete" if name == "delete_path" else "move"
    given = args.get("path", args.get("source"))
    assert str(caught.value) == (
        f"cannot {action} '{given}': it contains the git repository '{repo}' ('{git}'), and Tether does "
        f"not change files under .git/ at any depth. If that is really meant, ask the user to {action} "
        "it themselves; otherwise work on the files inside it"
    )
    assert snapshot(root) == before


async def test_files_inside_a_nested_repository_can_still_be_changed(mctx: ToolContext, root: Path) -> None:
    await ReadFileTool().call({"path": "vendor/lib/src/a.py"}, mctx)
    await TOOLS["edit_file"].call({"path": "vendor/lib/src/a.py", "edits": [{"old_text": "1", "new_text": "3"}]}, mctx)
    await TOOLS["move_path"].call({"source": "vendor/lib/src", "destination": "vendor/lib/lib"}, mctx)
    await TOOLS["delete_path"].call({"path": "vendor/lib/lib", "recursive": True}, mctx)
    await TOOLS["move_path"].call({"source": "file.txt", "destination": "vendor/lib/file.txt"}, mctx)
    assert sorted(os.listdir(root / "vendor" / "lib")) == [".git", "file.txt"]


async def test_names_that_only_start_with_git_are_ordinary(mctx: ToolContext, root: Path) -> None:
    await TOOLS["move_path"].call({"source": "plain", "destination": "moved"}, mctx)
    await TOOLS["delete_path"].call({"path": "moved", "recursive": True}, mctx)
    assert not (root / "moved").exists()


@pytest.mark.parametrize("name", ["delete_path", "move_path"])
async def test_a_repository_created_while_approval_waits_is_not_taken(mctx: ToolContext, root: Path, name: str) -> None:
    args = {"path": "plain", "recursive": True} if name == "delete_path" else {"source": "plain", "destination": "p2"}
    previews = await TOOLS[name].preview(validate_args(TOOLS[name], args), mctx)
    (root / "plain" / "deep" / ".git").mkdir(parents=True)  # e.g. a `git init` in a command
    with pytest.raises(ToolError, match=r"contains the git repository 'plain/deep' \('plain/deep/\.git'\)"):
        await TOOLS[name].apply(validate_args(TOOLS[name], args), mctx, previews)
    assert (root / "plain" / "deep" / ".git").is_dir() and (root / "plain" / "c.txt").exists()


async def test_a_directory_swapped_for_a_link_to_git_while_approval_waits_gets_nothing_written(tmp_path: Path):
    # the preview saw a real directory `a/`; before the write, `a` became a link to .git
    import shutil

    from tether.tools.sandbox import SandboxError

    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / "a" / "hooks").mkdir(parents=True)
    (ws / "b").mkdir()
    (ws / "b" / "f.txt").write_text("x\n")
    disk = DiskFileIO(WorkspaceSandbox(ws))
    target = (ws / "a" / "hooks" / "pre-commit").resolve()
    shutil.rmtree(ws / "a")
    (ws / "a").symlink_to(".git")
    with pytest.raises(SandboxError, match=r"does not change files under \.git"):
        await disk.write_text(target, "#!/bin/sh\necho planted\n")
    with pytest.raises(SandboxError, match=r"does not change files under \.git"):
        await disk.move(ws / "b", ws / "a" / "b")
    assert not (ws / ".git" / "hooks" / "pre-commit").exists() and not (ws / ".git" / "b").exists()
