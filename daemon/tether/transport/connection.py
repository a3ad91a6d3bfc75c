"""One client connection: bytes in -> parsed messages, messages out -> batched frames.

Owns: the protocol fds' reads and writes, framing outgoing messages, one write per
event-loop tick, and backpressure through coalescers (docs/decisions/0012-transport.md).
Must not: interpret messages (that is `tether_protocol.peer`, via `rpc.py`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import threading
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from tether_protocol import DEFAULT_MAX_MESSAGE, Framing, dumps, encoder_for
from tether_protocol.peer import MessageReader

log = logging.getLogger("tether.transport")

_READ_SIZE = 1 << 16
# Above this many bytes waiting in the pipe we call the client congested and stop
# handing it new frames until it has read some.
_HIGH_WATER = 1 << 18
_LOW_WATER = 1 << 16

encode_json = dumps


class Coalescer(Protocol):
    """A producer of mergeable messages; `drain` sends what it has merged so far."""

    def drain(self) -> None: ...


class Connection:
    # the ACP version the client chose in `initialize` (server/handshake.py): which
    # renderer and answers its requests get; 1 until then (and for LSP clients)
    protocol_version: int = 1

    def __init__(
        self,
        read_fd: int,
        write_fd: int,
        on_message: Callable[[Any], None],
        on_close: Callable[[], None],
        framing: Framing | None = None,
        max_message: int = DEFAULT_MAX_MESSAGE,
    ) -> None:
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._on_message = on_message
        self._on_close = on_close
        self._reader = MessageReader(framing, max_message)
        self._encode_frame = encoder_for(framing or "lsp")
        self._outbox: list[bytes] = []
        self._coalescers: dict[int, Coalescer] = {}
        self._flush_scheduled = False
        self._paused = False
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._transport: asyncio.WriteTransport | None = None
        self._drained = asyncio.Event()
        self.frames_written = 0
        self.writes = 0

    # ---- start / stop -----------------------------------------------------------

    async def start(self, initial: bytes = b"") -> None:
        self._loop = asyncio.get_running_loop()
        mode = os.fstat(self._write_fd).st_mode
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode):
            pipe = os.fdopen(self._write_fd, "wb", buffering=0, closefd=False)
            transport, _ = await self._loop.connect_write_pipe(
                lambda: _WriterProtocol(self), pipe
            )
            transport.set_write_buffer_limits(high=_HIGH_WATER, low=_LOW_WATER)
            self._transport = transport
        if initial:
            self.data_received(initial)
        # A thread does the blocking reads: it works for pipes, files and ttys alike,
        # and hands each chunk to the loop in one call.
        threading.Thread(target=self._read_loop, name="tether-stdin", daemon=True).start()

    def _read_loop(self) -> None:
        loop = self._loop
        assert loop is not None
        try:
            while True:
                data = os.read(self._read_fd, _READ_SIZE)
                if not data:
                    break
                loop.call_soon_threadsafe(self.data_received, data)
        except OSError as exc:
            log.debug("stdin read failed: %s", exc)
        finally:
            try:
                loop.call_soon_threadsafe(self._eof)
            except RuntimeError:  # loop already closed
                pass

    def _eof(self) -> None:
        if not self._closed:
            self._on_close()

    @property
    def framing(self) -> Framing | None:
        return self._reader.framing

    def set_framing(self, framing: Framing) -> None:
        self._reader.set_framing(framing)
        self._encode_frame = encoder_for(framing)

    # ---- incoming ---------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        framing = self._reader.framing
        messages = self._reader.feed(data)
        if framing is None and self._reader.framing is not None:
            self._encode_frame = encoder_for(self._reader.framing)
        for message in messages:
            self._on_message(message)

    # ---- outgoing ---------------------------------------------------------------

    def send(self, message: Any) -> None:
        self.send_body(encode_json(message))

    def send_body(self, body: bytes) -> None:
        self._outbox.append(self._encode_frame(body))
        self._schedule_flush()

    def send_bodies(self, bodies: Iterable[bytes]) -> None:
        """Queue many message bodies already encoded as UTF-8 JSON (a replay), in order."""
        frame = self._encode_frame
        self._outbox.extend([frame(body) for body in bodies])
        self._schedule_flush()

    def add_coalescer(self, coalescer: Coalescer) -> None:
        self._coalescers[id(coalescer)] = coalescer
        self._schedule_flush()

    def discard_coalescer(self, coalescer: Coalescer) -> None:
        self._coalescers.pop(id(coalescer), None)

    @property
    def congested(self) -> bool:
        return self._paused

    def _schedule_flush(self) -> None:
        if not self._flush_scheduled and self._loop is not None:
            self._flush_scheduled = True
            self._loop.call_soon(self.flush)

    def flush(self) -> None:
        self._flush_scheduled = False
        if self._closed:
            self._outbox.clear()
            return
        if self._paused:
            return  # resume_writing() calls us again
        if self._coalescers:
            coalescers = list(self._coalescers.values())
            self._coalescers.clear()
            for c in coalescers:
                c.drain()
        if not self._outbox:
            self._drained.set()
            return
        data = b"".join(self._outbox)
        self.frames_written += len(self._outbox)
        self._outbox.clear()
        self.writes += 1
        self._drained.set()
        if self._transport is not None:
            self._transport.write(data)
        else:
            _write_all(self._write_fd, data)

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        self.flush()

    async def drain(self) -> None:
        """Wait until everything queued so far has been handed to the pipe."""
        while self._outbox or self._coalescers or self._flush_scheduled:
            self._drained.clear()
            if not self._flush_scheduled and not self._paused:
                self.flush()
                continue
            await self._drained.wait()
        if self._transport is not None:
            while self._transport.get_write_buffer_size() and not self._transport.is_closing():
                await asyncio.sleep(0.005)

    async def writable(self) -> None:
        """Returns once the client reads again (its pipe back under the low-water mark) or
        the connection is closed: a long replay waits here instead of queueing all of
        itself in memory ahead of a slower reader."""
        while self._paused and not self._closed:
            self._drained.clear()
            await self._drained.wait()

    def close(self) -> None:
        self._closed = True
        self._drained.set()  # nobody waits for a closed pipe
        if self._transport is not None:
            self._transport.close()

    def connection_lost(self) -> None:
        if not self._closed:
            self._closed = True
            self._drained.set()
            self._on_close()


class _WriterProtocol(asyncio.Protocol):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def pause_writing(self) -> None:
        self._conn.pause_writing()

    def resume_writing(self) -> None:
        self._conn.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._conn.connection_lost()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]

