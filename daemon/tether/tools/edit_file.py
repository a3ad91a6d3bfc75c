"""The `edit_file` tool: exact-string replacements in one text file, written once.

Owns: matching each `old_text` once (or every time with `replace_all`), applying the edits in memory so a
call is all-or-nothing, "\\n" for a CRLF file, and messages that say how to fix a bad match.
Must not: write when any edit fails, edit a file not read in its current version, or change files under `.git`.
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
    current_text,
    has_read,
    require_files,
    resolve_target,
    write_change,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["Edit", "EditFileArgs", "EditFileTool"]

# Whitespace-insensitive hints are only looked for in files up to this many lines.
_HINT_MAX_LINES = 20_000


class Edit(ToolArgs, frozen=True):
    """One replacement of exact text."""

    old_text: Annotated[str, Meta(description="Exact text to find.")]
    new_text: Annotated[str, Meta(description="Text to put in its place.")]
    replace_all: Annotated[bool, Meta(description="Replace every occurrence instead of requiring exactly one.")] = False


class EditFileArgs(ToolArgs, frozen=True):
    """What `edit_file` is given: one file and the replacements to make in it, in order."""

    path: Annotated[str, Meta(description="File path, relative to the workspace root.")]
    edits: Annotated[tuple[Edit, ...], Meta(description="Replacements, applied in order.", min_length=1)]


class EditFileTool(MutatingTool[EditFileArgs]):
    name: ClassVar[str] = "edit_file"
    description: ClassVar[str] = (
        "Replace exact text in an existing file. Each edit's `old_text` must match the file "
        "exactly once, including whitespace and indentation (include a few surrounding lines "
        "to make it unique), or set `replace_all` to replace every occurrence. Several edits "
        "are applied in order and written together; if any fails, nothing changes. Read the "
        "file first (read_file); line-number prefixes from read_file are not part of the text."
    )
    args_type = EditFileArgs
    kind: ClassVar[str] = "edit"

    untitled: ClassVar[str] = "Edit file"

    def title(self, args: EditFileArgs) -> str:
        return f"Edit {args.path}"

    async def preview(self, args: EditFileArgs, ctx: ToolContext) -> list[ChangePreview]:
        files = require_files(ctx, self.name)
        path, rel = resolve_target(ctx, args.path)
        if os.path.isdir(path):
            raise ToolError(f"'{rel}' is a directory; edit_file edits one file")
        old = await current_text(files, path)
        if old is None:
            raise ToolError(f"no such file '{rel}'; use write_file to create it")
        if ctx.reads is not None:
            if not has_read(ctx, path):
                raise ToolError(f"read '{rel}' before editing it (read_file), so the edit matches its current text")
            ctx.reads.check(path, old)
        new = _apply_edits(old, args.edits, rel)
        return [ChangePreview(str(path), old, new, unified_diff=unified_diff(old, new, rel))]

    async def apply(
        self,
        args: EditFileArgs,
        ctx: ToolContext,
        previews: list[ChangePreview],
        accepted_hunks: Mapping[str, list[int]] | None = None,
    ) -> ToolResult:
        (preview,) = previews
        rel = ctx.sandbox.relative(Path(preview.path))
        count = len(args.edits)
        done = f"Edited {rel} ({count} edit{'s' if count != 1 else ''})"
        return await write_change(ctx, self.name, preview, accepted_hunks, done)


def _apply_edits(text: str, edits: tuple[Edit, ...], rel: str) -> str:
    crlf = "\r\n" in text
    for number, edit in enumerate(edits, 1):
        where = f"edit {number} of {len(edits)}: " if len(edits) > 1 else ""
        after = "; no edits were applied" if len(edits) > 1 else ""
        old_text, new_text = edit.old_text, edit.new_text
        if old_text == "":
            raise ToolError(
                f"{where}old_text is empty in {rel}; include the lines around the insertion point "
                f"in old_text (or use write_file to create a file){after}"
            )
        if old_text == new_text:
            raise ToolError(f"{where}old_text and new_text are identical, so nothing would change in {rel}{after}")
        if crlf and old_text not in text and "\r" not in old_text:
            # The model sees lines without their "\r"; match the file's own line endings.
            old_text, new_text = old_text.replace("\n", "\r\n"), new_text.replace("\n", "\r\n")
        found = _occurrences(text, old_text)
        if found == 0:
            hint = _whitespace_hint(text, old_text)
            raise ToolError(
                f"{where}old_text not found in {rel} (check whitespace and indentation; read the file again)"
                f"{hint}{after}"
            )
        if found > 1 and not edit.replace_all:
            raise ToolError(
                f"{where}old_text matches {found} times in {rel}; add surrounding lines to make it unique "
                f"or set replace_all{after}"
            )
        text = text.replace(old_text, new_text) if found > 1 else text.replace(old_text, new_text, 1)
    return text


def _occurrences(text: str, needle: str, limit: int = 1000) -> int:
    """How many places `needle` starts at (overlaps count: "aa" is ambiguous in "aaa")."""
    count, start = 0, 0
    while count < limit and (at := text.find(needle, start)) != -1:
        count += 1
        start = at + 1
    return count


def _whitespace_hint(text: str, needle: str) -> str:
    """Where a match ignoring indentation and trailing spaces starts, if there is one."""
    wanted = [line.strip() for line in needle.strip("\n").split("\n")]
    lines = text.split("\n")
    if not any(wanted) or len(lines) > _HINT_MAX_LINES:
        return ""
    stripped = [line.strip() for line in lines]
    for start in range(len(stripped) - len(wanted) + 1):
        if stripped[start : start + len(wanted)] == wanted:
            return f"; text that differs only in whitespace starts at line {start + 1}"
    return ""
