"""Reading a text delta from its bytes when it differs from the previous one only in its text.

Owns: `TextShape`: the bytes around a plain text delta's JSON string, learnt from a fully parsed chunk; a
later chunk with the same bytes around a plain string is that delta (a proof: docs/decisions/0005).
Must not: accept a chunk whose value it cannot prove, or cost a stream it never matches more than a few tries.
"""

from __future__ import annotations

import re
from itertools import repeat

import orjson

_NOT_PLAIN = re.compile(rb'["\\\x00-\x1f]')
_MAX_MISSES = 16  # chunks that missed or failed to teach a shape, before giving up on the stream


class TextShape:
    """`match(raw)` gives the text of a chunk of the learnt shape, or None; `learn` after a full parse."""

    __slots__ = ("_key", "_prefix", "_suffix", "_misses")

    def __init__(self, key: bytes) -> None:
        self._key = key  # the text's member, e.g. b'"content":'
        self._prefix: bytes | None = None
        self._suffix = b""
        self._misses = 0

    def match(self, raw: bytes) -> str | None:
        prefix = self._prefix
        if prefix is None:
            return None
        suffix = self._suffix
        start, end = len(prefix), len(raw) - len(suffix)
        if (
            end - start < 2
            or not raw.startswith(prefix)
            or not raw.endswith(suffix)
            or raw[start] != 0x22
            or raw[end - 1] != 0x22
        ):  # 0x22: the string's quotes
            self._misses += 1
            return None
        inner = raw[start + 1 : end - 1]
        if _NOT_PLAIN.search(inner) is not None:
            return None  # an escape or a quote: the full parser reads it
        try:
            text = inner.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if self._misses:
            self._misses = 0
        return text

    def match_all(self, datas: tuple[bytes, ...]) -> str | None:
        """The texts of a read's chunks joined, if every one has the learnt shape; else None.

        The same test as `match`, made with whole-list operations: every chunk starts with
        the prefix, ends with the suffix and is long enough for both; the strings between
        hold no escape, quote or control character; each is valid UTF-8.
        """
        prefix = self._prefix
        if prefix is None or not datas:
            return None
        start, tail = len(prefix) + 1, len(self._suffix) + 1  # the string's quotes
        if (
            min(map(len, datas)) < start + tail
            or not all(map(bytes.startswith, datas, repeat(prefix + b'"')))
            or not all(map(bytes.endswith, datas, repeat(b'"' + self._suffix)))
        ):
            return None
        inners = [data[start:-tail] for data in datas]
        joined = b"".join(inners)
        if _NOT_PLAIN.search(joined) is not None:
            return None
        if joined.isascii():
            return joined.decode("ascii")
        try:
            return "".join([inner.decode("utf-8") for inner in inners])  # each must be valid alone
        except UnicodeDecodeError:
            return None

    def learn(self, raw: bytes, text: str) -> None:
        """`raw` parsed to a plain delta of `text`; its bytes around the text become the shape."""
        if self._misses >= _MAX_MISSES:
            self._prefix = None
            return
        key = self._key
        encoded = orjson.dumps(text)
        at = raw.find(key) + len(key)
        while raw[at : at + 1] in (b" ", b"\t", b"\n", b"\r"):
            at += 1
        # the key must be the delta's own (JSON has no other place for those bytes) and the
        # server must have written the string as orjson does, or the slot is not found
        if at < len(key) or raw.count(key) != 1 or not raw.startswith(encoded, at):
            self._misses += 1
            self._prefix = None
            return
        self._prefix, self._suffix = raw[:at], raw[at + len(encoded) :]

    @property
    def learnt(self) -> bool:
        return self._prefix is not None
