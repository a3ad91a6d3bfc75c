"""The `read_file` tool: numbered lines of one text file (or of its open editor buffer).

Owns: line windowing, `cat -n` numbering, the 256 KiB output cap, binary refusal, helpful errors, and the
ledger digest of the whole version seen (the file streams by once; never held whole in memory).
Must not: block the event loop on disk I/O, or touch anything outside the sandbox.
"""

from __future__ import annotations

import codecs
import difflib
import hashlib
import os
import stat
from typing import IO, TYPE_CHECKING, Annotated, ClassVar

import anyio.to_thread
from msgspec import Meta

from tether.tools.args import ToolArgs
from tether.tools.base import Tool, ToolContext, ToolError, ToolLocation, ToolResult
from tether.tools.textfile import (
    MAX_LINE_CHARS,
    SNIFF_BYTES,
    clip_line,
    has_nul,
    split_lines,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from pathlib import Path

    from tether.tools.sandbox import WorkspaceSandbox

__all__ = ["ReadFileArgs", "ReadFileTool"]

MAX_OUTPUT_BYTES = 256 * 1024
DEFAULT_LIMIT = 2000
# A line longer than this many bytes is never shown in full, so the rest is only counted.
_LINE_BYTES = MAX_LINE_CHARS * 4 + 4
_UTF8_CONTINUATION = bytes(range(0x80, 0xC0))


class ReadFileArgs(ToolArgs, frozen=True):
    """What `read_file` is given: one file and an optional window of lines."""

    path: Annotated[str, Meta(description="File path, relative to the workspace root.")]
    offset: Annotated[int, Meta(description="First line to read (1-based).", ge=1)] | None = None
    limit: Annotated[int, Meta(description="Maximum number of lines to read.", ge=1)] | None = None


class ReadFileTool(Tool[ReadFileArgs]):
    name: ClassVar[str] = "read_file"
    description: ClassVar[str] = (
        "Read a text file from the workspace. Returns lines prefixed with their 1-based line "
        "numbers and a tab. Reads up to `limit` lines (default 2000) starting at line `offset` "
        "(default 1); use offset/limit to page through large files. Lines over 2000 characters "
        "are cut. Binary files are refused; use list_dir for directories."
    )
    args_type = ReadFileArgs
    kind: ClassVar[str] = "read"
    untitled: ClassVar[str] = "Read file"

    def title(self, args: ReadFileArgs) -> str:
        path, offset, limit = args.path, args.offset, args.limit
        if offset is not None and limit is not None:
            return f"Read {path} (lines {offset}-{offset + limit - 1})"
        if offset is not None:
            return f"Read {path} (from line {offset})"
        if limit is not None:
            return f"Read {path} (lines 1-{limit})"
        return f"Read {path}"

    def locations(self, args: ReadFileArgs, sandbox: WorkspaceSandbox) -> list[ToolLocation]:
        found = super().locations(args, sandbox)
        for location in found:
            location.line = args.offset or 1
        return found

    async def run(self, args: ReadFileArgs, ctx: ToolContext) -> ToolResult:
        sandbox = ctx.sandbox
        real = sandbox.resolve(args.path)
        offset = args.offset or 1
        limit = args.limit or DEFAULT_LIMIT
        rel = sandbox.relative(real)
        location = [ToolLocation(str(real), offset)]

        buffer = _open_document(ctx.documents, sandbox, args.path, real)
        if buffer == "" and not os.path.lexists(real):
            buffer = None  # an empty new buffer is no file yet (SPEC §3.24): the disk says "missing"
        if buffer is None and ctx.files is not None and hasattr(ctx.files, "editor_text"):
            # ACP clients that offer fs/read_text_file: the editor's copy is the truth
            buffer = await ctx.files.editor_text(real)
        if buffer is not None:
            lines = iter([clip_line(line) for line in split_lines(buffer)])
            text = _render(rel, lines, offset, limit, lambda: sum(1 for _ in lines))
            if ctx.reads is not None:
                ctx.reads.record(real, buffer)
            return ToolResult(text, locations=location)

        want_full = ctx.reads is not None
        text, digest = await anyio.to_thread.run_sync(_read_disk, sandbox, real, rel, offset, limit, want_full)
        if ctx.reads is not None and digest is not None:
            ctx.reads.record_digest(real, digest)
        return ToolResult(text, locations=location)


def _open_document(documents: Mapping[str, str], sandbox: WorkspaceSandbox, given: str, real: Path) -> str | None:
    if not documents:
        return None
    lexical = os.path.normpath(given if os.path.isabs(given) else os.path.join(sandbox.root, given))
    for key in (str(real), lexical):
        if key in documents:
            return documents[key]
    # Editors may key buffers by a path that goes through a symlink to the workspace.
    for key, text in documents.items():
        if os.path.realpath(key) == str(real):
            return text
    return None


def _read_disk(
    sandbox: WorkspaceSandbox, real: Path, rel: str, offset: int, limit: int, want_full: bool = False
) -> tuple[str, str | None]:
    """The rendered window, and (if `want_full`) the digest of the file's editable text
    (`ledger.text_digest`; None if not UTF-8)."""
    try:
        info = os.stat(real)
    except FileNotFoundError:
        raise ToolError(_missing_message(sandbox, real, rel)) from None
    except OSError as exc:
        raise ToolError(f"cannot read '{rel}': {exc.strerror}") from None
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(f"'{rel}' is a directory, not a file; use list_dir to see what it contains")
    if not stat.S_ISREG(info.st_mode):
        # FIFOs and devices could block forever or never end
        raise ToolError(f"'{rel}' is not a regular file (device, socket or pipe); read_file only reads files")
    try:
        with open(real, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
            if has_nul(head) or not _utf8_prefix(head, final=len(head) < SNIFF_BYTES):
                raise ToolError(f"'{rel}' looks like a binary file ({info.st_size} bytes); read_file only returns text")
            handle.seek(0)
            # One read for both: the hash is of exactly the version that is shown.
            source = _HashingReader(handle) if want_full else handle
            source.read(len(codecs.BOM_UTF8) if head.startswith(codecs.BOM_UTF8) else 0)
            text = _render(rel, _disk_lines(source, offset), offset, limit, lambda: _count_rest(source))
            return text, source.digest() if isinstance(source, _HashingReader) else None
    except OSError as exc:
        raise ToolError(f"cannot read '{rel}': {exc.strerror}") from None


class _HashingReader:
    """Reads through `handle`, hashing each byte and checking it decodes as UTF-8 on the
    way (the NUL check is the head's, done before): `ledger.text_digest` of the editable
    text, in constant memory."""

    def __init__(self, handle: IO[bytes]) -> None:
        self.handle, self.sha = handle, hashlib.sha256()
        self.decoder: codecs.IncrementalDecoder | None = codecs.getincrementaldecoder("utf-8")("strict")

    def _seen(self, data: bytes) -> bytes:
        self.sha.update(data)
        try:
            if self.decoder is not None:
                self.decoder.decode(data)
        except UnicodeDecodeError:
            self.decoder = None  # not editable text: no digest
        return data

    def read(self, size: int = -1) -> bytes:
        return self._seen(self.handle.read(size))

    def readline(self, size: int = -1) -> bytes:
        return self._seen(self.handle.readline(size))

    def digest(self) -> str | None:
        while self.read(1 << 20):  # what the window and the line count did not read
            pass
        try:
            if self.decoder is not None:
                self.decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            self.decoder = None
        return self.sha.hexdigest() if self.decoder is not None else None


def _utf8_prefix(head: bytes, *, final: bool) -> bool:
    try:
        codecs.getincrementaldecoder("utf-8")("strict").decode(head, final=final)
    except UnicodeDecodeError:
        return False
    return True


def _disk_lines(handle: IO[bytes] | _HashingReader, offset: int) -> Iterator[str]:
    """Display lines, streamed; lines before `offset` are skipped without decoding."""
    lineno = 0
    while True:
        raw = handle.readline(_LINE_BYTES)
        if not raw:
            return
        lineno += 1
        extra_chars = 0
        if not raw.endswith(b"\n"):
            # an over-long line: count (do not keep) the rest of it
            while chunk := handle.readline(1 << 20):
                # characters = bytes that do not continue a UTF-8 sequence
                extra_chars += len(chunk.translate(None, _UTF8_CONTINUATION))
                if chunk.endswith(b"\n"):
                    extra_chars -= 2 if chunk.endswith(b"\r\n") else 1
                    break
        if lineno < offset:
            yield ""
            continue
        text = raw.decode("utf-8", "replace").removesuffix("\n")
        if extra_chars:
            text = text.removesuffix("\r")
            shown = text[:MAX_LINE_CHARS]
            yield f"{shown} [... line truncated, {len(text) - len(shown) + extra_chars} more characters]"
        else:
            yield clip_line(text)


def _count_rest(handle: IO[bytes] | _HashingReader) -> int:
    count, last = 0, b"\n"
    while chunk := handle.read(1 << 20):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (0 if last == b"\n" else 1)


def _render(rel: str, lines: Iterator[str], offset: int, limit: int, count_rest: Callable[[], int]) -> str:
    out: list[str] = []
    size = 0
    lineno = 0
    stopped = False
    for line in lines:
        lineno += 1
        if lineno < offset:
            continue
        entry = f"{lineno:>6}\t{line}\n"
        entry_size = len(entry.encode("utf-8", "replace"))
        if len(out) >= limit or size + entry_size > MAX_OUTPUT_BYTES:
            stopped = True
            break
        out.append(entry)
        size += entry_size
    # Stopping early leaves the stream just after line `lineno`; only newlines are counted from there.
    total = lineno + count_rest() if stopped else lineno
    if total == 0:
        return "(empty file)"
    if offset > total:
        raise ToolError(f"offset {offset} is past the end of '{rel}', which has {total} lines")
    last = offset + len(out) - 1
    text = "".join(out)
    if last < total:
        text += f"[truncated: showing lines {offset}-{last} of {total}; use offset={last + 1} to read more]\n"
    return text.removesuffix("\n")


def _missing_message(sandbox: WorkspaceSandbox, real: Path, rel: str) -> str:
    message = f"no such file '{rel}'"
    parent = real.parent
    try:
        names = os.listdir(parent)
    except OSError:
        return f"{message} (the directory '{sandbox.relative(parent)}' does not exist either)"
    close = difflib.get_close_matches(real.name, names, n=3, cutoff=0.6)
    if close:
        hints = ", ".join(f"'{sandbox.relative(parent / name)}'" for name in close)
        message += f"; did you mean {hints}?"
    return message
