"""The idle timeout of one streamed reply: one timer for the whole stream, not a cancel scope per read.

Owns: `IdleWatch`: a read stores the time (`seen()`), the reader marks time spent handing events on
(`away()`), and one loop timer shuts the socket down when the gap really passed, setting `fired`.
Must not: run per read more than an attribute store, or touch the socket unless the gap really passed.
"""

from __future__ import annotations

import asyncio
import contextlib
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
        with contextlib.suppress(OSError):  # already closed: the read has ended anyway
            self._sock.shutdown(socket.SHUT_RDWR)  # the read waiting on it ends now

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
