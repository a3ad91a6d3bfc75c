"""The `move_path` tool: move or rename a file, symbolic link or directory in the workspace.

Owns: checking both ends (sandbox, `.git`, nested repositories, the root, a directory into itself, an
existing destination only with `overwrite`), creating parents, and carrying the ledger's entry over.
Must not: follow a final symlink at either end (the link itself moves), or move anything but through `ctx.files`.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import anyio.to_thread
from msgspec import Meta

from tether.tools.args import ToolArgs
from tether.tools.base import (
    ChangePreview,
    MutatingTool,
    ToolContext,
    ToolError,
    ToolLocation,
    ToolResult,
)
from tether.tools.diffs import cap_diff, unified_diff
from tether.tools.mutating import (
    check_parents,
    current_text,
    forget_read,
    has_read,
    refuse_nested_repository,
    require_files,
    resolve_target,
    scan_tree,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from tether.tools.sandbox import WorkspaceSandbox

__all__ = ["MovePathArgs", "MovePathTool"]


class MovePathArgs(ToolArgs, frozen=True):
    """What `move_path` is given: where from, where to, and whether to replace a file."""

    source: Annotated[str, Meta(description="Path to move, relative to the workspace root.")]
    destination: Annotated[str, Meta(description="Its new path, relative to the workspace root.")]
    overwrite: Annotated[bool, Meta(description="Replace an existing destination file.")] = False


class MovePathTool(MutatingTool[MovePathArgs]):
    name: ClassVar[str] = "move_path"
    description: ClassVar[str] = (
        "Move or rename a file, symbolic link or directory inside the workspace. Missing parent "
        "directories of the destination are created. An existing destination file is only "
        "replaced with `overwrite: true`; give the full new path, not just a directory to move into."
    )
    args_type = MovePathArgs
    kind: ClassVar[str] = "move"

    untitled: ClassVar[str] = "Move path"

    def title(self, args: MovePathArgs) -> str:
        return f"Move {args.source} → {args.destination}"

    def locations(self, args: MovePathArgs, sandbox: WorkspaceSandbox) -> list[ToolLocation]:
        found: list[ToolLocation] = []
        for value in (args.source, args.destination):
            with contextlib.suppress(Exception):  # a bad path is reported by preview(), not here
                found.append(ToolLocation(str(sandbox.resolve(value))))
        return found

    async def preview(self, args: MovePathArgs, ctx: ToolContext) -> list[ChangePreview]:
        files = require_files(ctx, self.name)
        source, src_rel = resolve_target(ctx, args.source, follow_final_link=False)
        target, dst_rel = resolve_target(ctx, args.destination, follow_final_link=False)
        if src_rel == ".":
            raise ToolError("cannot move the workspace root; move the files or directories inside it")
        if not os.path.lexists(source):
            raise ToolError(f"no such file or directory '{src_rel}'; nothing to move (list_dir shows what exists)")
        if source == target:
            raise ToolError(f"source and destination are the same path ('{src_rel}'); nothing to move")
        src_is_dir = os.path.isdir(source) and not os.path.islink(source)
        if src_is_dir and str(target).startswith(str(source) + os.sep):
            raise ToolError(f"cannot move directory '{src_rel}' into itself ('{dst_rel}'); choose a path outside it")
        if src_is_dir:
            refuse_nested_repository(ctx, await anyio.to_thread.run_sync(scan_tree, source), src_rel, "move")
        replaced: str | None = None
        if os.path.lexists(target) and not _same_file(source, target):
            if os.path.isdir(target) and not os.path.islink(target):
                raise ToolError(
                    f"'{dst_rel}' is an existing directory; give the full new path, "
                    f"e.g. '{dst_rel}/{os.path.basename(source)}'"
                )
            if not args.overwrite:
                raise ToolError(
                    f"'{dst_rel}' already exists; set overwrite: true to replace it, or choose another destination"
                )
            if src_is_dir:
                raise ToolError(f"cannot replace the file '{dst_rel}' with the directory '{src_rel}'; delete it first")
            replaced = await _text_or_none(files, target)
        check_parents(ctx, target, dst_rel)

        text = None if src_is_dir else await _text_or_none(files, source)
        moves = [ChangePreview(str(source), text, text, move_to=str(target), unified_diff=_rename(src_rel, dst_rel))]
        if os.path.lexists(target) and not _same_file(source, target):
            diff = unified_diff(replaced, text, dst_rel) if replaced is not None and text is not None else ""
            moves.append(ChangePreview(str(target), replaced, text, unified_diff=diff or f"# '{dst_rel}' replaced\n"))
        return moves

    async def apply(
        self,
        args: MovePathArgs,
        ctx: ToolContext,
        previews: list[ChangePreview],
        accepted_hunks: Mapping[str, list[int]] | None = None,
    ) -> ToolResult:
        # A move has no partial form, so accepted_hunks is not consulted.
        files = require_files(ctx, self.name)
        move = previews[0]
        if move.move_to is None:
            raise ToolError(f"{self.name}: internal error: the preview has no destination")
        source, target = Path(move.path), Path(move.move_to)
        src_rel, dst_rel = ctx.sandbox.relative(source), ctx.sandbox.relative(target)
        overwriting = len(previews) > 1
        # Things may have changed while approval was pending: never clobber a new file.
        if not os.path.lexists(source):
            raise ToolError(f"'{src_rel}' no longer exists; nothing was moved")
        if os.path.lexists(target) and not overwriting and not _same_file(source, target):
            raise ToolError(f"'{dst_rel}' appeared while the move was waiting for approval; nothing was moved")
        if os.path.isdir(source) and not os.path.islink(source):
            refuse_nested_repository(ctx, await anyio.to_thread.run_sync(scan_tree, source), src_rel, "move")
        carried = move.old_text is not None and ctx.reads is not None and has_read(ctx, source)
        if carried and ctx.reads is not None and move.old_text is not None:
            try:
                ctx.reads.check(source, move.old_text)
            except ToolError:
                carried = False  # the model's view was already stale; keep it that way
        await files.move(source, target)
        forget_read(ctx, target)
        forget_read(ctx, source)
        if carried and ctx.reads is not None and move.old_text is not None:
            ctx.reads.record(target, move.old_text)
        text = f"Moved {src_rel} to {dst_rel}."
        if overwriting:
            text += f" The previous {dst_rel} was replaced."
            if previews[1].unified_diff.startswith("---"):
                text += "\n\nChange to the replaced file:\n" + cap_diff(previews[1].unified_diff).rstrip("\n")
        return ToolResult(text, locations=[ToolLocation(str(target))])


def _rename(src_rel: str, dst_rel: str) -> str:
    return f"rename from {src_rel}\nrename to {dst_rel}\n"


def _same_file(a: Path, b: Path) -> bool:
    """True when both names are one file (a case-only rename on a case-insensitive disk)."""
    try:
        return os.path.samefile(a, b) and os.lstat(a).st_ino == os.lstat(b).st_ino
    except OSError:
        return False


async def _text_or_none(files: Any, path: Path) -> str | None:
    if os.path.islink(path):
        return None
    try:
        return await current_text(files, path)
    except ToolError:
        return None  # binary files move too; there is just no text to show
