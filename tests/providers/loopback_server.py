"""A scriptable HTTP/1.1 server on 127.0.0.1 for the provider client's tests (test_wire.py,
test_http_client_start.py): handlers answer request by request on kept-alive connections,
over TLS when given a context, and record what they saw (connections, request lines,
whether the client closed its connection); `Served.aclose` ends it all.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ssl


def sse_body(*texts: str) -> bytes:
    frames = [{"choices": [{"index": 0, "delta": {"content": t}}]} for t in texts]
    frames.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return b"".join(f"data: {json.dumps(f)}\n\n".encode() for f in frames) + b"data: [DONE]\n\n"


def content_length(body: bytes, status: int = 200, extra: str = "") -> bytes:
    head = f"HTTP/1.1 {status} X\r\ncontent-type: text/event-stream\r\ncontent-length: {len(body)}\r\n{extra}\r\n"
    return head.encode() + body


def chunked(pieces: list[bytes]) -> bytes:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    return head + b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


Handler = Callable[["Seen", asyncio.StreamReader, asyncio.StreamWriter], Awaitable[bool]]


@dataclass
class Seen:
    """What the server saw: one entry per connection, the request lines on it, and whether
    each connection ended with the client closing it (EOF or reset)."""

    connections: int = 0
    request_lines: list[str] = field(default_factory=list)
    client_closed: asyncio.Event = field(default_factory=asyncio.Event)
    handlers: set[asyncio.Task[Any]] = field(default_factory=set)


async def read_request(reader: asyncio.StreamReader) -> str | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    length = next((int(v) for k, _, v in (line.partition(": ") for line in lines) if k.lower() == "content-length"), 0)
    await reader.readexactly(length)
    return lines[0]


async def serving(handler: Handler, tls: ssl.SSLContext | None = None) -> tuple[Served, Seen, int]:
    seen = Seen()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.connections += 1
        task = asyncio.current_task()
        assert task is not None
        seen.handlers.add(task)
        try:
            while await handler(seen, reader, writer):
                pass
        except ConnectionError:
            seen.client_closed.set()
        finally:
            writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0, ssl=tls)
    return Served(server, seen), seen, server.sockets[0].getsockname()[1]


@dataclass
class Served:
    server: asyncio.Server
    seen: Seen

    async def aclose(self) -> None:
        """Stop listening, let the connections end (the clients closed theirs), stop the rest."""
        self.server.close()
        if self.seen.handlers:
            _done, stuck = await asyncio.wait(self.seen.handlers, timeout=1.0)
            for task in stuck:
                task.cancel()
            await asyncio.gather(*stuck, return_exceptions=True)


def answering(*responses: bytes, close_after: bool = False) -> Handler:
    """Answers each request on a connection with the next of `responses` (kept alive)."""
    queue = list(responses)

    async def handle(seen: Seen, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        line = await read_request(reader)
        if line is None:
            seen.client_closed.set()
            return False
        seen.request_lines.append(line)
        if not queue:
            return False  # nothing left to say: close without answering
        writer.write(queue.pop(0))
        await writer.drain()
        return not close_after

    return handle
