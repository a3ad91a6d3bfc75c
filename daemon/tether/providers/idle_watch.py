"""The idle timeout of one streamed reply: one timer for the whole stream, not a cancel scope per read.

Owns: `IdleWatch`. A read only stores the time (`seen()`), and the reader says when it
hands its events on (`away()`: the time its consumer takes is not the server's silence);
a single event-loop timer wakes at the earliest moment the gap could have passed, and
either moves itself to `last read + gap` (or a gap on, while the reader is away) or, when nothing came for the gap, shuts the connection's socket down
so that the pending read ends at once (end of stream or a transport error), and sets
`fired` so the reader reports a timeout, not an early end.
Must not: run per read more than an attribute store, or touch the socket unless the
gap really passed.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any


class IdleWatch:
    """`seen()` after every read; `fired` once the gap passed with nothing read; `stop()` at the end."""

    __slots__ = ("gap", "fired", "last", "is_away", "_loop", "_sock", "_handle")

    def __init__(self, gap: float, sock: Any) -> None:
        self.gap = gap
        self.fired = False
        self.is_away = False
        self._loop = asyncio.get_running_loop()
        self._sock = sock  # the connection's socket (asyncio's TransportSocket, or a socket)
        self.last = self._loop.time()
        self._handle: asyncio.TimerHandle | None = self._loop.call_at(self.last + gap, self._check)

    def seen(self) -> None:
        """Something was read now, or the reader is back to read (the timer is not touched:
        it moves itself when it wakes)."""
        self.is_away = False
        self.last = self._loop.time()

    def away(self) -> None:
        """The reader hands what it read on; it calls `seen()` when it reads again."""
        self.is_away = True

    def _check(self) -> None:
        now = self._loop.time()
        due = (now if self.is_away else self.last) + self.gap
        if now < due:
            self._handle = self._loop.call_at(due, self._check)
            return
        self._handle = None
        self.fired = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)  # the read waiting on it ends now
        except OSError:
            pass  # already closed: the read has ended anyway

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
