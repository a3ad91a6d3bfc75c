"""Reading a snapshot's JSON text a value at a time, for a restore that never holds it whole.

Owns: ``SnapshotReader``, which walks the top-level object of any JSON layout of a
snapshot and hands over each key with its value, the big lists (``turns``, ``messages``,
``reports``) one item at a time; its errors name the line, column and character where the
text is wrong or cut short. Must not: check what the values mean (``snapshot_checks``),
or touch a store.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from typing import BinaryIO

from tether.store.snapshot_checks import SnapshotError

__all__ = ["STREAMED_LISTS", "SnapshotReader"]

STREAMED_LISTS = frozenset({"turns", "messages", "reports"})
_CHUNK = 1 << 20
_LARGEST_VALUE = 256 << 20  # one message or report this large is a broken file, not a snapshot
_SPACE = " \t\n\r"
_decode = json.JSONDecoder().raw_decode


class SnapshotReader:
    """The snapshot in ``stream`` (UTF-8 bytes), read ``_CHUNK`` at a time: ``entries()``
    yields ``(key, value)`` for each top-level key, in the file's order, the value of a
    streamed list being an iterator of its items (read it before the next entry)."""

    def __init__(self, stream: BinaryIO, name: str) -> None:
        self._stream, self.name = stream, name
        self._text = codecs.getincrementaldecoder("utf-8")()
        self._buf, self._pos, self._eof = "", 0, False
        self._dropped, self._lines, self._line_start = 0, 0, 0  # before _buf: characters, newlines, last line's start

    def entries(self) -> Iterator[tuple[str, object]]:
        self._expect("{", "a snapshot is a JSON object")
        if self._peek() == "}":
            self._pos += 1
        else:
            while True:
                key = self._value("a key")
                if not isinstance(key, str):
                    raise self._error("expected a key (a string)", self._pos)
                self._expect(":", f"expected ':' after {key!r}")
                if key in STREAMED_LISTS and self._peek() == "[":
                    self._pos += 1
                    yield key, self._items(key)
                else:
                    yield key, self._value(f'"{key}"')
                if self._separator("}", "the snapshot"):
                    break
        if self._peek() != "":
            raise self._error("extra text after the snapshot's closing '}'", self._pos)

    def _items(self, key: str) -> Iterator[object]:
        if self._peek() == "]":
            self._pos += 1
            return
        index = 0
        while True:
            yield self._value(f"{key}[{index}]")
            if self._separator("]", f'"{key}"'):
                return
            index += 1

    def _separator(self, close: str, what: str) -> bool:
        """True at ``close``, False at ``,``; anything else is an error."""
        found = self._peek()
        self._pos += 1
        if not found:
            raise self._error(f"the file ends inside {what}: it was cut short", self._pos - 1)
        if found == close:
            return True
        if found != ",":
            raise self._error(f"expected ',' or '{close}' in {what}, found {_shown(found)}", self._pos - 1)
        return False

    def _expect(self, char: str, why: str) -> None:
        found = self._peek()
        if found != char:
            raise self._error(f"{why}: expected '{char}', found {_shown(found)}", self._pos)
        self._pos += 1

    def _peek(self) -> str:
        """The next character that is not white space ("" at the end of the file)."""
        while True:
            while self._pos < len(self._buf) and self._buf[self._pos] in _SPACE:
                self._pos += 1
            if self._pos < len(self._buf) or not self._more():
                return self._buf[self._pos:self._pos + 1]

    def _value(self, what: str) -> object:
        """The JSON value at the reading position, reading on until it is whole."""
        self._peek()
        while True:
            try:
                value, end = _decode(self._buf, self._pos)
            except json.JSONDecodeError as exc:
                cut = exc.msg.startswith("Unterminated string") or exc.pos >= len(self._buf) - 16
                if cut and self._more():
                    continue
                if cut:
                    raise self._error(f"the file ends inside {what}: it was cut short", len(self._buf)) from None
                raise self._error(f"{what} is not valid JSON ({exc.msg})", exc.pos) from None
            if end == len(self._buf) and self._more():  # a number may go on in the next chunk
                continue
            self._pos = end
            return value

    def _more(self) -> bool:
        """Read on (the consumed text let go first); False at the end of the file."""
        if self._eof:
            return False
        if self._pos:
            gone = self._buf[:self._pos]
            newlines = gone.count("\n")
            if newlines:
                self._lines += newlines
                self._line_start = self._dropped + gone.rindex("\n") + 1
            self._dropped += self._pos
            self._buf, self._pos = self._buf[self._pos:], 0
        if len(self._buf) > _LARGEST_VALUE:
            raise self._error(f"a value over {_LARGEST_VALUE >> 20} MiB: not a snapshot's", 0)
        data = self._stream.read(max(_CHUNK, len(self._buf)))  # doubling: a big value is read in few tries
        try:
            self._buf += self._text.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise self._error(f"the file is not UTF-8 text ({exc.reason})", len(self._buf)) from None
        self._eof = not data
        return bool(data)

    def _error(self, problem: str, at: int) -> SnapshotError:
        before = self._buf[:at]
        line = self._lines + before.count("\n") + 1
        start = self._dropped + before.rindex("\n") + 1 if "\n" in before else self._line_start
        where = self._dropped + at
        return SnapshotError(f"{self.name}: line {line}, column {where - start + 1} (character {where}): {problem}")


def _shown(char: str) -> str:
    return repr(char) if char else "the end of the file"
