"""Text shown to a person who must decide on it, with nothing hidden in it.

Owns: `visible()`: characters a terminal or editor would not show as themselves (controls, bidi overrides,
invisible formats, odd spaces) written as escapes, so a command shown for approval is what runs (decision 0009).
Must not: change printable text (applying it twice changes nothing), or be used on what is run or stored.
"""

from __future__ import annotations

import unicodedata

__all__ = ["visible"]

_NAMED = {"\r": "\\r", "\b": "\\b", "\f": "\\f", "\v": "\\v", "\0": "\\0", "\x1b": "\\x1b"}


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


# Characters of other categories that draw as nothing or as a blank: the combining
# grapheme joiner, Hangul fillers, the Braille blank, Khmer inherent vowels, Mongolian
# and other variation selectors (`test.sh` and `test.sh\u034f` look the same)
_BLANKS = frozenset(
    [
        0x034F,
        0x115F,
        0x1160,
        0x17B4,
        0x17B5,
        0x2800,
        0x3164,
        0xFFA0,
        *range(0x180B, 0x1810),
        *range(0xFE00, 0xFE10),
        *range(0xE0100, 0xE01F0),
    ]
)


def _hidden(char: str) -> bool:
    if char in "\n\t ":
        return False
    # Cc: C0/C1 controls and DEL; Cf: format characters (bidi controls, zero-width
    # spaces and joiners, BOM, soft hyphen, tag characters); Zl/Zp: line and paragraph
    # separators, which some editors break lines on; Zs: spaces other than the ASCII one
    # (a no-break space passes for a space)
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Zs") or ord(char) in _BLANKS


def visible(text: str) -> str:
    """`text` with every character a person would not see as itself escaped."""
    if text.isascii() and text.isprintable():
        return text  # the usual case: one C-level scan (newlines and tabs are not printable)
    return "".join(_escape(char) if _hidden(char) else char for char in text)
