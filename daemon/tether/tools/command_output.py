"""A command's output as Tether keeps and streams it: capped to its head and tail, and sent on
in batches that end on a character boundary.

Owns: `HeadTail` (the first and last bytes, with counts of what fell between) and
`OutputStreamer` (live output in batches, by size or interval, up to a limit).
Must not: run the command or decide its limits (the tool's settings do).
"""

from __future__ import annotations

import codecs
import time
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from collections.abc import Callable


class HeadTail:
    """The first and last few KiB of a byte stream, with counts of what fell between."""

    def __init__(self, head: int, tail: int) -> None:
        self._head_max, self._tail_max = head, tail
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0
        self._newlines = 0

    def feed(self, data: bytes) -> None:
        self._total += len(data)
        self._newlines += data.count(b"\n")
        room = self._head_max - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        self._tail += data
        if len(self._tail) > 2 * self._tail_max:  # trim in batches, not on every chunk
            del self._tail[: -self._tail_max]

    def render(self) -> str:
        head, tail = bytes(self._head), bytes(self._tail[-self._tail_max :] if self._tail_max else b"")
        if len(head) + len(tail) == self._total:
            return (head + tail).decode("utf-8", "replace")
        # Cut at line ends when one is near, so the model sees whole lines on both sides.
        end = head.rfind(b"\n")
        head = head[: end + 1] if end >= len(head) // 2 else _until_char_boundary(head)
        start = tail.find(b"\n")
        tail = tail[start + 1 :] if 0 <= start < len(tail) // 2 else _from_char_boundary(tail)
        elided = self._total - len(head) - len(tail)
        lines = self._newlines - head.count(b"\n") - tail.count(b"\n")
        head_text = head.decode("utf-8", "replace")
        gap = "" if not head_text or head_text.endswith("\n") else "\n"
        marker = f"[... {lines} lines ({elided} bytes) elided ...]\n"
        return head_text + gap + marker + tail.decode("utf-8", "replace")


def _until_char_boundary(data: bytes) -> bytes:
    """`data` without a trailing, incomplete UTF-8 sequence."""
    for back in range(1, min(4, len(data)) + 1):
        lead = data[-back]
        if lead & 0xC0 != 0x80:  # not a continuation byte: ASCII or the lead of a sequence
            needed = 4 if lead >= 0xF0 else 3 if lead >= 0xE0 else 2 if lead >= 0xC0 else 1
            return data if needed <= back else data[:-back]
    return data


def _from_char_boundary(data: bytes) -> bytes:
    """`data` without leading UTF-8 continuation bytes (the rest of a cut character)."""
    skip = 0
    while skip < min(3, len(data)) and data[skip] & 0xC0 == 0x80:
        skip += 1
    return data[skip:]


class OutputStreamer:
    """Decodes output incrementally and hands it to `sink` at most every `interval` s
    (sooner once `size` characters are waiting), up to `limit` bytes in all."""

    def __init__(self, sink: Callable[[str], None] | None, interval: float, size: int, limit: int) -> None:
        self._sink = sink
        self._interval, self._size, self._limit = interval, size, limit
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending: list[str] = []
        self._pending_len = 0
        self._last = time.monotonic()
        self._wake = anyio.Event()
        self._sent = 0
        self._stopped = sink is None

    def feed(self, data: bytes) -> None:
        if self._stopped:
            return
        over = self._sent + len(data) > self._limit
        self._sent += len(data)
        text = self._decoder.decode(data[: max(0, len(data) - (self._sent - self._limit))] if over else data)
        if over:
            self._stopped = True
            mib = self._limit / (1024 * 1024)
            text += f"\n[... output continues; streaming stopped after {mib:g} MiB ...]\n"
        if text:
            self._pending.append(text)
            self._pending_len += len(text)
        if over or self._pending_len >= self._size or time.monotonic() - self._last >= self._interval:
            self.flush()
        else:
            self._wake.set()

    async def tick(self) -> None:
        """Flush text left waiting by `feed` once its interval is up (runs until cancelled)."""
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            await anyio.sleep(max(0.0, self._last + self._interval - time.monotonic()))
            self.flush()

    def flush(self) -> None:
        self._last = time.monotonic()
        if self._pending and self._sink is not None:
            text, self._pending, self._pending_len = "".join(self._pending), [], 0
            self._sink(text)

    def close(self) -> None:
        if not self._stopped:
            self._stopped = True
            tail = self._decoder.decode(b"", final=True)
            if tail:
                self._pending.append(tail)
        self.flush()
