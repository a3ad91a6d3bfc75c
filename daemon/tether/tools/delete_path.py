"""The `delete_path` tool: delete a file, a symbolic link, or (with `recursive`) a directory.

Owns: refusing the root, `.git` at any depth, a directory holding a nested repository, a non-empty directory
without `recursive`; the preview (removed text, or how many files go); forgetting deleted files in the ledger.
Must not: follow a final symlink (the link is deleted), or delete anything but through `ctx.files`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar

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
    current_text,
    forget_read,
    refuse_nested_repository,
    require_files,
    resolve_target,
    scan_tree,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["DeletePathArgs", "DeletePathTool"]


class DeletePathArgs(ToolArgs, frozen=True):
    """What `delete_path` is given: one path, and whether a full directory may go."""

    path: Annotated[str, Meta(description="Path to delete, relative to the workspace root.")]
    recursive: Annotated[bool, Meta(description="Delete a directory and everything in it.")] = False


class DeletePathTool(MutatingTool[DeletePathArgs]):
    name: ClassVar[str] = "delete_path"
    description: ClassVar[str] = (
        "Delete a file or a symbolic link (the link, not its target). Empty directories are "
        "deleted too; a directory with content needs `recursive: true`. The workspace root, "
        ".git/ and directories holding a git repository (a .git inside) cannot be deleted."
    )
    args_type = DeletePathArgs
    kind: ClassVar[str] = "delete"

    untitled: ClassVar[str] = "Delete path"

    def title(self, args: DeletePathArgs) -> str:
        return f"Delete {args.path}"

    async def preview(self, args: DeletePathArgs, ctx: ToolContext) -> list[ChangePreview]:
        files = require_files(ctx, self.name)
        path, rel = resolve_target(ctx, args.path, follow_final_link=False)
        if rel == ".":
            raise ToolError("refusing to delete the workspace root; name the files or directories inside it")
        if not os.path.lexists(path):
            raise ToolError(f"no such file or directory '{rel}'; nothing to delete (list_dir shows what exists)")
        if os.path.isdir(path) and not os.path.islink(path):
            scan = await anyio.to_thread.run_sync(scan_tree, path)  # may be a big tree
            count = scan.files
            refuse_nested_repository(ctx, scan, rel, "delete")
            if _has_entries(path) and not args.recursive:
                raise ToolError(
                    f"'{rel}' is a directory that is not empty ({_files(count)}); set recursive: true "
                    "to delete it and everything in it, or delete single files"
                )
            gone = f"with the {_files(count)} in it" if count else "(no files in it)"
            diff = f"--- a/{rel}/\n+++ /dev/null\n# directory '{rel}/' deleted {gone}\n"
            return [ChangePreview(str(path), None, None, unified_diff=diff)]
        old: str | None = None
        if not os.path.islink(path):
            try:
                old = await current_text(files, path)
            except ToolError:
                old = None  # binary files can be deleted; there is just no text to show
        if old is None:
            diff = f"--- a/{rel}\n+++ /dev/null\n# {'symbolic link' if os.path.islink(path) else 'file'} deleted\n"
        else:
            diff = unified_diff(old, "", rel, deleted=True) or f"--- a/{rel}\n+++ /dev/null\n# empty file deleted\n"
        return [ChangePreview(str(path), old, None, unified_diff=diff)]

    async def apply(
        self,
        args: DeletePathArgs,
        ctx: ToolContext,
        previews: list[ChangePreview],
        accepted_hunks: Mapping[str, list[int]] | None = None,
    ) -> ToolResult:
        # All or nothing: a deletion has no partial form, so accepted_hunks is not consulted.
        files = require_files(ctx, self.name)
        (preview,) = previews
        path = Path(preview.path)
        rel = ctx.sandbox.relative(path)
        if rel == ".":
            raise ToolError("refusing to delete the workspace root")
        is_dir = os.path.isdir(path) and not os.path.islink(path)
        if is_dir:  # again: a repository may have appeared while approval was pending
            refuse_nested_repository(ctx, await anyio.to_thread.run_sync(scan_tree, path), rel, "delete")
        if preview.old_text is not None and await current_text(files, path) != preview.old_text:
            # Edited while the approval was pending: the user did not approve deleting that.
            raise ToolError(f"'{rel}' changed while the deletion was waiting for approval; nothing was deleted")
        await files.delete(path)
        forget_read(ctx, path)  # the ledger drops everything under a directory too
        text = f"Deleted directory {rel}." if is_dir else f"Deleted {rel}."
        if preview.unified_diff:
            text += "\n\nApplied diff:\n" + cap_diff(preview.unified_diff).rstrip("\n")
        return ToolResult(text, locations=[ToolLocation(str(path))])


def _has_entries(path: Path) -> bool:
    with os.scandir(path) as entries:
        return any(True for _ in entries)


def _files(count: int) -> str:
    return f"{count} file{'s' if count != 1 else ''}"
