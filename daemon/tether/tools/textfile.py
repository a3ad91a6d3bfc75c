"""What counts as a text file, and how its bytes become lines, for read_file and grep.

Owns: binary sniffing (a NUL byte in the first 8 KiB), byte-order-mark handling, and
splitting text into lines on "\\n" only (as ripgrep does; `str.splitlines` would also
split on form feeds, \\u2028 and friends and shift line numbers).
Must not: open files or know about the sandbox; callers pass bytes.
"""

from __future__ import annotations

import codecs

__all__ = [
    "MAX_LINE_CHARS",
    "SNIFF_BYTES",
    "clip_line",
    "decode_text",
    "display_path",
    "has_nul",
    "split_lines",
]

SNIFF_BYTES = 8192
MAX_LINE_CHARS = 2000


def has_nul(head: bytes) -> bool:
    """The binary heuristic git and ripgrep share: a NUL byte near the start."""
    return b"\0" in head[:SNIFF_BYTES]


def decode_text(data: bytes) -> str:
    """Decode file bytes the way ripgrep's default encoding detection does.

    A UTF-8 byte-order mark is dropped, a UTF-16 one selects UTF-16, anything else
    is UTF-8 with undecodable bytes replaced by U+FFFD.
    """
    if data.startswith(codecs.BOM_UTF8):
        return data[len(codecs.BOM_UTF8) :].decode("utf-8", "replace")
    if data.startswith(codecs.BOM_UTF16_LE) or data.startswith(codecs.BOM_UTF16_BE):
        return data.decode("utf-16", "replace")  # the codec consumes the BOM itself
    return data.decode("utf-8", "replace")


def split_lines(text: str) -> list[str]:
    """Lines without their "\\n"; a trailing newline does not start an extra empty line.

    A "\\r" before the newline is kept: matching must see it (as ripgrep does), and
    display code strips it.
    """
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def clip_line(line: str, limit: int = MAX_LINE_CHARS) -> str:
    """Drop a trailing "\\r" and cut very long lines (minified files) with a visible marker."""
    if line.endswith("\r"):
        line = line[:-1]
    if len(line) <= limit:
        return line
    return f"{line[:limit]} [... line truncated, {len(line) - limit} more characters]"


def display_path(rel: str) -> str:
    """A path safe to print: undecodable filename bytes (surrogate escapes) become U+FFFD."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
