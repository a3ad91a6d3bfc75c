"""grep's pure-Python backend, used when no `rg` binary is available.

Owns: compiling the pattern with `re` and searching a given list of files line by line,
with the same rules the ripgrep backend follows (binary = NUL in the first 8 KiB and
skipped, BOM-aware decoding, lines split on "\\n" only with "\\r" kept for matching).
Must not: decide which files to search (the grep tool passes the list), format output,
or run on the event loop thread (it is blocking; call it via a worker thread).
"""

from __future__ import annotations

import os
import re
import threading
import warnings

from tether.tools.base import ToolError
from tether.tools.grep_hits import GrepRequest, HitCollector
from tether.tools.textfile import SNIFF_BYTES, decode_text, has_nul, split_lines

__all__ = ["compile_pattern", "search_python"]


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
        data = _read_text_bytes(os.path.join(root, rel))
        if data is None:
            continue
        hits: list[tuple[int, str]] = []
        count = 0
        for number, line in enumerate(split_lines(decode_text(data)), 1):
            if regex.search(line):
                count += 1
                if collector.wants_more_of(rel, len(hits)):
                    hits.append((number, line))
        collector.add_file(rel, hits, count)


def _read_text_bytes(path: str) -> bytes | None:
    """The file's bytes, or None if it is binary (checked before reading the rest) or unreadable."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
            if has_nul(head):
                return None
            return head + handle.read()
    except OSError:
        return None  # vanished or unreadable: the rg backend skips these too
