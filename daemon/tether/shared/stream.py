"""One client connection of the shared daemon, over its accepted Unix socket.

Owns: `SocketConnection`, the transport's `Connection` (framing, batching, backpressure and
coalescing unchanged) over an asyncio stream transport, and `ClientProtocol`, which checks the
peer's uid (`SO_PEERCRED`), reads the proxy's preamble line, then feeds every byte on.
Must not: interpret a message, or accept a connection from another uid.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tether_protocol import DEFAULT_MAX_MESSAGE, Framing

from ..transport.connection import Connection
from .proxy import read_preamble

if TYPE_CHECKING:
    from ..services.live_session import Audiences

log = logging.getLogger("tether.shared")

_MAX_PREAMBLE = 1 << 16
# (pid, uid, gid) of the connected process, as the kernel saw it at connect()
_UCRED = struct.Struct("3i")


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end (the kernel's word, not the client's)."""
    _pid, uid, _gid = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size))
    return int(uid)


class SocketConnection(Connection):
    """A `Connection` whose bytes come and go through a stream transport."""

    def __init__(self, transport: asyncio.Transport, on_message: Callable[[Any], None],
                 on_close: Callable[[], None], audience: Audiences,
                 framing: Framing | None = None, max_message: int = DEFAULT_MAX_MESSAGE) -> None:
        super().__init__(-1, -1, on_message, on_close, framing, max_message)
        self._stream = transport
        self.audience = audience  # read by the emitter: who else sees a session

    def flush(self) -> None:
        if self._closed and self._coalescers:  # merged deltas still go to the other viewers
            coalescers = list(self._coalescers.values())
            self._coalescers.clear()
            for coalescer in coalescers:
                coalescer.drain()
        super().flush()

    async def start(self, initial: bytes = b"") -> None:
        self._loop = asyncio.get_running_loop()
        self._stream.set_write_buffer_limits(high=1 << 18, low=1 << 16)
        self._transport = self._stream  # writes, buffer size, closing
        if initial:
            self.data_received(initial)


# Called with (the protocol, the window's workspace, its framing, the bytes after the
# preamble) once it is read.
Accept = Callable[["ClientProtocol", str, "str | None", bytes], None]


class ClientProtocol(asyncio.Protocol):
    def __init__(self, accept: Accept) -> None:
        self._accept = accept
        self._head = b""
        self.transport: asyncio.Transport | None = None
        self.conn: SocketConnection | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        uid = peer_uid(sock)
        if uid != os.getuid():
            log.warning("refused a connection from uid %d: the shared daemon serves uid %d only", uid, os.getuid())
            transport.abort()

    def data_received(self, data: bytes) -> None:
        if self.conn is not None:
            self.conn.data_received(data)
            return
        self._head += data
        line, newline, rest = self._head.partition(b"\n")
        if not newline:
            if len(self._head) > _MAX_PREAMBLE:
                self._refuse("no preamble line")
            return
        found = read_preamble(line)
        if found is None:
            self._refuse("not a Tether proxy's preamble")
            return
        self._head = b""
        self._accept(self, *found, rest)

    def _refuse(self, why: str) -> None:
        log.warning("closed a connection: %s", why)
        assert self.transport is not None
        self.transport.abort()

    def eof_received(self) -> bool | None:
        if self.conn is None:
            return False  # closed before its preamble: nothing to serve, close our side too
        self.conn._eof()
        return True  # keep our side open: answers still go out, the server closes it

    def pause_writing(self) -> None:
        if self.conn is not None:
            self.conn.pause_writing()

    def resume_writing(self) -> None:
        if self.conn is not None:
            self.conn.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.conn is not None:
            self.conn.connection_lost()
