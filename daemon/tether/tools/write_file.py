"""The `write_file` tool: create a text file, or replace the whole text of one.

Owns: the tool's args class and messages, refusing to overwrite a file the model has not
read (or has read an older version of), and refusing directories and file-in-the-way
parents before anything is shown for approval.
Must not: write anywhere but through `ctx.files`, or change files under a `.git` at any depth.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar

from msgspec import Meta

from tether.tools.args import ToolArgs
from tether.tools.base import (
    ChangePreview,
    MutatingTool,
    ToolContext,
    ToolError,
    ToolResult,
)
from tether.tools.diffs import unified_diff
from tether.tools.mutating import (
    check_parents,
    current_text,
    has_read,
    require_files,
    resolve_target,
    write_change,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["WriteFileArgs", "WriteFileTool"]


class WriteFileArgs(ToolArgs, frozen=True):
    """What `write_file` is given: a file and its whole new content."""

    path: Annotated[str, Meta(description="File path, relative to the workspace root.")]
    content: Annotated[str, Meta(description="The complete new content of the file.")]


class WriteFileTool(MutatingTool[WriteFileArgs]):
    name: ClassVar[str] = "write_file"
    description: ClassVar[str] = (
        "Create a text file, or replace the entire content of an existing one, with `content`. "
        "Missing parent directories are created. Overwriting an existing file requires reading "
        "it first (read_file). To change part of a file, prefer edit_file."
    )
    args_type = WriteFileArgs
    kind: ClassVar[str] = "edit"

    untitled: ClassVar[str] = "Write file"

    def title(self, args: WriteFileArgs) -> str:
        return f"Write {args.path}"

    async def preview(self, args: WriteFileArgs, ctx: ToolContext) -> list[ChangePreview]:
        files = require_files(ctx, self.name)
        path, rel = resolve_target(ctx, args.path)
        if os.path.isdir(path):
            raise ToolError(f"'{rel}' is a directory; write_file needs a file path such as '{rel}/name.txt'")
        check_parents(ctx, path, rel)
        content = args.content
        old = await current_text(files, path)
        if old is not None and ctx.reads is not None:
            if not has_read(ctx, path):
                raise ToolError(f"read '{rel}' before overwriting it (read_file), so its current content is not lost")
            ctx.reads.check(path, old)
        if old == content:
            raise ToolError(f"'{rel}' already has exactly this content; nothing to write")
        diff = unified_diff(old or "", content, rel, created=old is None)
        return [ChangePreview(str(path), old, content, unified_diff=diff)]

    async def apply(
        self,
        args: WriteFileArgs,
        ctx: ToolContext,
        previews: list[ChangePreview],
        accepted_hunks: Mapping[str, list[int]] | None = None,
    ) -> ToolResult:
        (preview,) = previews
        rel = ctx.sandbox.relative(Path(preview.path))
        done = f"Created {rel}" if preview.old_text is None else f"Overwrote {rel}"
        return await write_change(ctx, self.name, preview, accepted_hunks, done)
