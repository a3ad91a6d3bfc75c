"""What the four file-changing tools share, and the default set of them.

Owns: a model path as a target (sandbox, `.git`, final symlinks), nested repositories in a directory to
delete or move, `ctx.files` wrapped by the recorder, the ledger checks, writing the kept hunks, the result text.
Must not: touch the disk but through `ctx.files` (`os.path` existence queries excepted), or know approvals.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.tools.base import (
    ChangePreview,
    FileIO,
    ToolContext,
    ToolError,
    ToolLocation,
    ToolResult,
)
from tether.tools.diffs import apply_hunks, cap_diff, hunks, unified_diff
from tether.tools.disk_io import MissingFileError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from tether.tools.base import Tool

__all__ = [
    "GIT_REFUSAL",
    "TreeScan",
    "check_parents",
    "current_text",
    "default_mutating_tools",
    "describe_hunks",
    "forget_read",
    "has_read",
    "refuse_nested_repository",
    "require_files",
    "resolve_target",
    "scan_tree",
    "write_change",
]

GIT_REFUSAL = "Tether does not change files under .git/"


@dataclass(frozen=True, slots=True)
class TreeScan:
    """What is inside a directory: how many files (and links), and the first `.git` found."""

    files: int
    git: str | None  # absolute path of a `.git` directory or file, or None


def scan_tree(path: Path) -> TreeScan:
    """Walk `path` without following links and without recursion (any depth works).

    A `.git` (any case) is a directory of a nested repository, or the file a worktree or
    submodule has instead; either way it stops the walk's search for more.
    """
    files, git, stack = 0, None, [os.fspath(path)]
    while stack:
        try:
            entries = os.scandir(stack.pop())
        except OSError:
            continue  # unreadable: the deletion itself will say so
        with entries:
            for entry in entries:
                if git is None and entry.name.lower() == ".git":
                    git = entry.path
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    files += 1
    return TreeScan(files, git)


def refuse_nested_repository(ctx: ToolContext, scan: TreeScan, rel: str, action: str) -> None:
    """ToolError when the directory `rel` holds a repository's `.git` (a hard refusal)."""
    if scan.git is None:
        return
    git_rel = ctx.sandbox.relative(Path(scan.git))
    repo = os.path.dirname(git_rel) or "."
    raise ToolError(
        f"cannot {action} '{rel}': it contains the git repository '{repo}' ('{git_rel}'), and {GIT_REFUSAL} "
        f"at any depth. If that is really meant, ask the user to {action} it themselves; "
        "otherwise work on the files inside it"
    )


def default_mutating_tools() -> list[Tool[Any]]:
    """Fresh instances of the four file-changing tools, in the order the model sees them."""
    # Imported here: the tool modules import the helpers below.
    from tether.tools.delete_path import DeletePathTool
    from tether.tools.edit_file import EditFileTool
    from tether.tools.move_path import MovePathTool
    from tether.tools.write_file import WriteFileTool

    return [WriteFileTool(), EditFileTool(), DeletePathTool(), MovePathTool()]


def require_files(ctx: ToolContext, tool_name: str) -> FileIO:
    if ctx.files is None:
        raise ToolError(f"{tool_name}: changing files is not available in this session")
    # every change the four file tools make goes through here: recorded for rewind
    return ctx.files if ctx.recorder is None else ctx.recorder.wrap(ctx.files)


def resolve_target(ctx: ToolContext, given: str, *, follow_final_link: bool = True) -> tuple[Path, str]:
    """The absolute path a tool acts on and its workspace-relative name.

    Every spelling goes through the sandbox first (SandboxError for escapes, including a
    final symlink that points outside). With `follow_final_link` False a final symlink
    is the target itself, so deleting or moving a link never touches what it points to.
    """
    sandbox = ctx.sandbox
    target = sandbox.resolve(given)
    if not follow_final_link:
        lexical = os.path.normpath(given if os.path.isabs(given) else os.path.join(sandbox.root, given))
        if lexical != str(sandbox.root):
            link = sandbox.resolve(os.path.dirname(lexical)) / os.path.basename(lexical)
            if os.path.islink(link):
                target = link
    rel = sandbox.relative(target)
    # Any depth (a nested repository, a submodule's or worktree's `.git` file), and
    # lower-cased: on case-insensitive disks ".GIT/config" is the same file.
    if ".git" in rel.lower().split("/"):
        raise ToolError(f"{GIT_REFUSAL} ('{rel}'); use git commands (run_command) to change the repository")
    return target, rel


def check_parents(ctx: ToolContext, path: Path, rel: str) -> None:
    """Refuse early when a parent "directory" of `path` is really a file (creating would fail)."""
    root = str(ctx.sandbox.root)
    parent = os.path.dirname(os.fspath(path))
    while len(parent) > len(root) and not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    if os.path.lexists(parent) and not os.path.isdir(parent):
        raise ToolError(
            f"cannot create '{rel}': '{ctx.sandbox.relative(Path(parent))}' is a file, not a directory; "
            "choose another path"
        )


async def current_text(files: FileIO, path: Path) -> str | None:
    """The file's text as `files` sees it (an editor buffer may win over disk); None if missing."""
    try:
        return await files.read_text(path)
    except (MissingFileError, FileNotFoundError):
        return None
    except ToolError:
        # Other FileIO implementations word "missing" their own way.
        if not os.path.lexists(path):
            return None
        raise


def has_read(ctx: ToolContext, path: Path) -> bool:
    """Whether the model has read `path`; a ledger without `has_read` is asked via check()."""
    probe = getattr(ctx.reads, "has_read", None)
    return True if probe is None else bool(probe(path))


def forget_read(ctx: ToolContext, path: Path) -> None:
    forget = getattr(ctx.reads, "forget", None)
    if forget is not None:
        forget(path)


def _numbers(indexes: list[int]) -> str:
    words = [str(i + 1) for i in indexes]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def describe_hunks(rel: str, kept: list[int], total: int) -> str:
    """'The user kept hunks 1 and 3 of 4 in x; hunks 2 and 4 were rejected and not applied.'"""
    rejected = [i for i in range(total) if i not in kept]
    kept_part = f"hunk{'s' if len(kept) > 1 else ''} {_numbers(kept)} of {total}"
    verb = "were" if len(rejected) > 1 else "was"
    return (
        f"The user kept {kept_part} in {rel}; "
        f"hunk{'s' if len(rejected) > 1 else ''} {_numbers(rejected)} {verb} rejected and not applied."
    )


def _kept(accepted: Mapping[str, list[int]] | None, preview: ChangePreview, rel: str, total: int) -> list[int]:
    if accepted is None:
        return list(range(total))
    # The caller keys by the preview's absolute path; a relative key is accepted too.
    chosen = accepted.get(preview.path, accepted.get(rel))
    if chosen is None:
        return list(range(total))
    return sorted({i for i in chosen if isinstance(i, int) and 0 <= i < total})


def _counts(diff: str) -> str:
    lines = diff.split("\n")
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++ "))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("--- "))
    return f"+{added} -{removed} lines"


async def write_change(
    ctx: ToolContext,
    tool_name: str,
    preview: ChangePreview,
    accepted: Mapping[str, list[int]] | None,
    done: str,
) -> ToolResult:
    """Write `preview.new_text` (or only its kept hunks) once, record it, and report.

    `done` is the first sentence of the result ("Edited src/a.py (2 edits)").
    """
    files = require_files(ctx, tool_name)
    path = Path(preview.path)
    rel = ctx.sandbox.relative(path)
    old, new = preview.old_text, preview.new_text
    if new is None:
        raise ToolError(f"{tool_name}: internal error: no new text for '{rel}'")
    # The user may have edited the file while the approval was pending: never overwrite that.
    if await current_text(files, path) != old:
        raise ToolError(
            f"'{rel}' changed while the change was waiting for approval; nothing was written. "
            "Read it again and redo the change."
        )
    total = len(hunks(old or "", new))
    kept = _kept(accepted, preview, rel, total)
    note = ""
    final = new
    if len(kept) < total:
        if not kept:
            return ToolResult(
                f"The user rejected the change to {rel} (all {total} hunk{'s' if total > 1 else ''}); "
                "nothing was written. Ask the user what they want instead of retrying the same change."
            )
        final = apply_hunks(old or "", new, kept)
        note = "\n" + describe_hunks(rel, kept, total)
    await files.write_text(path, final)
    if ctx.reads is not None:
        ctx.reads.record(path, final)
    diff = unified_diff(old or "", final, rel, created=old is None)
    changed = hunks(old or "", final)
    line = changed[0].new_start + 1 if changed else 1
    body = f"{done}: {_counts(diff)}.{note}"
    # A file created in full is exactly what the model sent: echoing it back only costs tokens.
    if diff and not (old is None and final == new):
        body += "\n\nApplied diff:\n" + cap_diff(diff).rstrip("\n")
    return ToolResult(body, locations=[ToolLocation(str(path), line)])
