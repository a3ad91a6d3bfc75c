"""The `list_dir` tool: the entries of a workspace directory, optionally a few levels deep.

Owns: formatting a gitignore-respecting listing (workspace-relative paths, "/" after
directories, symlinks shown with their target) with a 1000-entry cap.
Must not: follow symlinked directories, list anything outside the sandbox, or block the
event loop while walking.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar

import anyio.to_thread
from msgspec import Meta

from tether.tools.args import ToolArgs
from tether.tools.base import Tool, ToolContext, ToolError, ToolResult
from tether.tools.textfile import display_path
from tether.tools.walk import WalkEntry, WalkStats, walk

if TYPE_CHECKING:
    from tether.tools.sandbox import WorkspaceSandbox

__all__ = ["ListDirArgs", "ListDirTool"]

MAX_ENTRIES = 1000


class ListDirArgs(ToolArgs, frozen=True):
    """What `list_dir` is given: a directory and how deep to list it."""

    path: Annotated[str, Meta(description="Directory, relative to the workspace root.")] = "."
    depth: Annotated[int, Meta(description="Levels to list.", ge=1, le=5)] = 1


class ListDirTool(Tool[ListDirArgs]):
    name: ClassVar[str] = "list_dir"
    description: ClassVar[str] = (
        "List a workspace directory. Entries are workspace-relative paths, sorted, with a "
        "trailing '/' on directories; gitignored entries and .git are left out. `depth` "
        "(1-5, default 1) lists that many levels below `path` (default: the workspace root)."
    )
    args_type = ListDirArgs
    kind: ClassVar[str] = "read"

    def title(self, args: ListDirArgs) -> str:
        where = "the workspace root" if args.path in ("", ".") else args.path
        return f"List {where} (depth {args.depth})" if args.depth > 1 else f"List {where}"

    async def run(self, args: ListDirArgs, ctx: ToolContext) -> ToolResult:
        real = ctx.sandbox.resolve(args.path)
        text = await anyio.to_thread.run_sync(_list, ctx.sandbox, real, args.depth)
        return ToolResult(text)


def _list(sandbox: WorkspaceSandbox, real: Path, depth: int) -> str:
    rel = sandbox.relative(real)
    if not real.exists():
        raise ToolError(f"no such directory '{rel}'")
    if not real.is_dir():
        raise ToolError(f"'{rel}' is a file, not a directory; use read_file to read it")
    stats = WalkStats()
    lines: list[str] = []
    total = 0
    for entry in walk(sandbox, rel, max_depth=depth, stats=stats):
        total += 1
        if len(lines) < MAX_ENTRIES:
            lines.append(_describe(sandbox, entry))
    if total == 0:
        lines.append("(empty directory)")
    elif total > len(lines):
        shown = len(lines)
        lines.append(
            f"[{total - shown} more entries not shown (showing {shown} of {total}); "
            "list a subdirectory or use a smaller depth]"
        )
    if stats.ignored:
        noun = "entry" if stats.ignored == 1 else "entries"
        lines.append(f"[{stats.ignored} gitignored {noun} not shown]")
    if stats.unreadable:
        lines.append(f"[{stats.unreadable} directories could not be read (permission denied)]")
    return "\n".join(lines)


def _describe(sandbox: WorkspaceSandbox, entry: WalkEntry) -> str:
    name = display_path(entry.rel)
    if entry.is_dir:
        return f"{name}/"
    if not entry.is_symlink:
        return name
    target = os.path.realpath(sandbox.absolute(entry.rel))
    try:
        inside = sandbox.relative(Path(target))
    except ToolError:
        return f"{name} -> (outside the workspace)"
    if not os.path.exists(target):
        return f"{name} -> (broken link)"
    return f"{name} -> {display_path(inside)}{'/' if os.path.isdir(target) else ''}"
