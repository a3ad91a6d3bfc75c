"""grep's pure-Python backend, used when no `rg` binary is available.

Owns: compiling the pattern with `re` and searching a given list of files line by line, with the ripgrep
backend's rules (NUL in the first 8 KiB: binary, skipped; BOM-aware; lines split on "\\n" only).
Must not: choose files, format output, or run on the event loop thread (it blocks).
"""

from __future__ import annotations

import codecs
import os
import re
import warnings
from typing import TYPE_CHECKING, BinaryIO

from tether.tools.base import ToolError
from tether.tools.regular_files import open_regular
from tether.tools.textfile import SNIFF_BYTES, decode_text, has_nul, split_lines

if TYPE_CHECKING:
    import threading
    from collections.abc import Iterator

    from tether.tools.grep_hits import GrepRequest, HitCollector

__all__ = ["compile_pattern", "search_python"]

_CHUNK = 1 << 20  # read at a time: a multi-GB file is searched in constant memory


def compile_pattern(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    flags = re.IGNORECASE if ignore_case else 0
    try:
        with warnings.catch_warnings():
            # `re` warns (FutureWarning) about constructs such as "[[" that it still accepts
            warnings.simplefilter("ignore")
            return re.compile(pattern, flags)
    except (re.error, OverflowError, RecursionError) as exc:
        raise ToolError(f"grep: invalid regex {pattern!r}: {exc}") from None


def search_python(
    root: str, request: GrepRequest, collector: HitCollector, stop: threading.Event | None = None
) -> None:
    """Search `request.files` (relative to `root`) and feed each file's hits to `collector`."""
    regex = compile_pattern(request.pattern, request.ignore_case)
    for rel in request.files:
        if stop is not None and stop.is_set():
            return
        lines = _file_lines(os.path.join(root, rel))
        if lines is None:
            continue
        hits: list[tuple[int, str]] = []
        count = 0
        try:
            for number, line in enumerate(lines, 1):
                if regex.search(line):
                    count += 1
                    if collector.wants_more_of(rel, len(hits)):
                        hits.append((number, line))
        except OSError:
            continue  # gone or unreadable while read: the rg backend skips these too
        collector.add_file(rel, hits, count)


def _file_lines(path: str) -> Iterator[str] | None:
    """The file's lines as `decode_text` and `split_lines` make them, read one at a time (a
    multi-GB dump is never whole in memory); None if it is binary or unreadable."""
    try:
        handle = open_regular(path)  # never a FIFO swapped in since the walk
    except OSError:
        return None  # vanished or unreadable: the rg backend skips these too
    try:
        head = handle.read(SNIFF_BYTES)
    except OSError:
        head = b"\0"
    if has_nul(head):
        handle.close()
        return None
    return _decoded(handle, head)


def _decoded(handle: BinaryIO, head: bytes) -> Iterator[str]:
    with handle:
        if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # rare: decoded whole
            yield from split_lines(decode_text(head + handle.read()))
            return
        # "\n" is never inside a UTF-8 sequence: cut there, pieces decode as the whole file does
        handle.seek(len(codecs.BOM_UTF8) if head.startswith(codecs.BOM_UTF8) else 0)
        pending: list[bytes] = []  # the line still open (a minified file's may span many reads)
        while chunk := handle.read(_CHUNK):
            cut = chunk.rfind(b"\n")
            if cut < 0:
                pending.append(chunk)
                continue
            pending.append(chunk[:cut])
            yield from b"".join(pending).decode("utf-8", "replace").split("\n")
            pending = [chunk[cut + 1 :]]
        if rest := b"".join(pending):
            yield rest.decode("utf-8", "replace")
