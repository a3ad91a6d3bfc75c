"""Reading a snapshot's JSON text a value at a time, for a restore that never holds it whole.

Owns: ``SnapshotReader``: each top-level key of any JSON layout with its value, the big lists
(``turns``, ``messages``, ``reports``) an item at a time; its errors name the line, column and
character where the text is wrong or cut short.
Must not: check what the values mean (``snapshot_checks``), or touch a store.
"""

from __future__ import annotations

import codecs
import json
import re
from typing import TYPE_CHECKING, BinaryIO

from tether.store.snapshot_checks import REQUIRED_LISTS, SnapshotError
from tether_protocol import whole_surrogates

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["STREAMED_LISTS", "SnapshotReader"]

STREAMED_LISTS = frozenset(REQUIRED_LISTS)  # (the `Snapshot` Struct's)
_CHUNK = 1 << 20
_LARGEST_VALUE = 256 << 20  # one message or report this large is a broken file, not a snapshot
_SPACE = " \t\n\r"
_decode = json.JSONDecoder().raw_decode
_HIGH_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")


class SnapshotReader:
    """The snapshot in ``stream`` (UTF-8 bytes; ``name``: the file, for an empty one), read
    ``chunk`` bytes at a time: ``entries()``
    yields ``(key, value)`` for each top-level key, in the file's order, the value of a
    streamed list being an iterator of its items (read it before the next entry)."""

    def __init__(self, stream: BinaryIO, name: str, chunk: int = _CHUNK) -> None:
        self._stream, self.name, self._chunk = stream, name, chunk
        self._text = codecs.getincrementaldecoder("utf-8")()
        self._buf, self._pos, self._eof, self._held = "", 0, False, ""
        self._dropped, self._lines, self._line_start = 0, 0, 0  # before _buf: characters, newlines, last line's start

    def entries(self) -> Iterator[tuple[str, object]]:
        if self._peek() == "":  # e.g. a dump whose redirect was left empty by an error
            raise SnapshotError(f"{self.name} is empty: expected a snapshot written by `tether sessions dump`")
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
            if self._pos < len(self._buf) or self._eof:
                return self._buf[self._pos : self._pos + 1]
            self._more()

    def _value(self, what: str) -> object:
        """The JSON value at the reading position, reading on until it is whole."""
        self._peek()
        while True:
            try:
                value, end = _decode(self._buf, self._pos)
            except json.JSONDecodeError as exc:
                unterminated = exc.msg.startswith("Unterminated string")
                # (a value may be cut anywhere: a literal, an escape, a number's exponent)
                if (unterminated or exc.pos >= len(self._buf) - 16) and not self._eof:
                    self._more()
                    continue
                if unterminated or exc.pos >= len(self._buf):
                    raise self._error(f"the file ends inside {what}: it was cut short", len(self._buf)) from None
                raise self._error(f"{what} is not JSON ({exc.msg})", exc.pos) from None
            except RecursionError:  # arrays or objects nested past Python's stack: a crafted file
                raise self._error(f"{what} is nested too deeply to be a snapshot's", self._pos) from None
            if end >= len(self._buf) - 16 and not self._eof:  # a number may go on in the next chunk ("1" ".5e3")
                self._more()
                continue
            self._pos = end
            return value

    def _more(self) -> None:
        """Read on (the consumed text let go first); ``_eof`` once the file is read whole."""
        if self._pos:
            gone = self._buf[: self._pos]
            newlines = gone.count("\n")
            if newlines:
                self._lines += newlines
                self._line_start = self._dropped + gone.rindex("\n") + 1
            self._dropped += self._pos
            self._buf, self._pos = self._buf[self._pos :], 0
        if len(self._buf) > _LARGEST_VALUE:
            raise self._error(f"a value over {_LARGEST_VALUE >> 20} MiB: not a snapshot's", 0)
        try:
            data = self._stream.read(max(self._chunk, len(self._buf)))  # doubling: a big value is read in few tries
        except OSError as exc:
            raise SnapshotError(f"cannot read it: {exc.strerror or exc}") from exc
        try:
            text = self._held + self._text.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise self._error(f"the file is not UTF-8 text ({exc.reason})", len(self._buf)) from None
        # an escape (or a pair of them) is never cut in two: the last characters from a
        # run of backslashes wait for the next read
        cut = _escapes_whole(text) if data else len(text)
        self._buf += whole_surrogates(text[:cut])  # a lone surrogate is U+FFFD, as on the wire
        self._held = text[cut:]
        self._eof = not data

    def _error(self, problem: str, at: int) -> SnapshotError:
        before = self._buf[:at]
        line = self._lines + before.count("\n") + 1
        start = self._dropped + before.rindex("\n") + 1 if "\n" in before else self._line_start
        where = self._dropped + at
        return SnapshotError(f"line {line}, column {where - start + 1} (character {where}): {problem}")


def _escapes_whole(text: str) -> int:
    """Where to cut ``text`` so that no escape of its last 12 characters, nor a pair of
    surrogate escapes, is cut in two: before a run of backslashes (holding back more is
    always safe), and before a high surrogate's escape right before it."""
    at = text.find("\\", max(0, len(text) - 12))
    if at < 0:
        return len(text)
    if _HIGH_ESCAPE.fullmatch(text, max(0, at - 6), at):
        at -= 6
    while at > 0 and text[at - 1] == "\\":
        at -= 1
    return at


def _shown(char: str) -> str:
    return repr(char) if char else "the end of the file"
