"""A real HTTP server on 127.0.0.1 for provider tests: scripted replies, recorded requests.

Each queued `Reply` is served to one request, in order: a status, headers, and body
chunks (bytes, or a float meaning "pause this many seconds"), optionally cut off
mid-body (`drop_after`) to simulate a broken connection. Requests are recorded with
their path, headers and JSON body. HTTP/1.1 with `Connection: close`, so a body ends
when the socket closes, as streamed replies do.

`GET .../models` is what a daemon sends in the background to fill its model picker: it
must not take a reply queued for a model request. It is answered from `models` (a list of
model objects; None answers 404), after `models_pause` seconds, and recorded in `listings`
(not `requests`), unless the next queued reply is not an event stream: a provider test
that scripts the listing itself queues it.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reply:
    status: int = 200
    chunks: list[bytes | float] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    drop_after: int | None = None  # close the socket after this many chunks


@dataclass
class SeenRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


def sse(*events: dict[str, Any] | str, event_names: list[str | None] | None = None) -> list[bytes | float]:
    """Encode events as SSE `data:` frames (a str is sent verbatim, e.g. "[DONE]")."""
    out: list[bytes | float] = []
    for i, ev in enumerate(events):
        name = event_names[i] if event_names else None
        data = ev if isinstance(ev, str) else json.dumps(ev)
        frame = (f"event: {name}\n" if name else "") + f"data: {data}\n\n"
        out.append(frame.encode())
    return out


def json_reply(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Reply:
    return Reply(
        status=status,
        chunks=[json.dumps(body).encode()],
        headers={"content-type": "application/json", **(headers or {})},
    )


class LocalHTTPServer:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[SeenRequest] = []
        self.fallback: Reply | None = None
        self.models: list[dict[str, Any]] | None = []
        self.models_pause = 0.0
        self.listings: list[SeenRequest] = []
        self._server: asyncio.AbstractServer | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> LocalHTTPServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    def queue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def _is_listing(self, seen: SeenRequest) -> bool:
        scripted = bool(self.replies) and self.replies[0].headers.get("content-type") != "text/event-stream"
        return seen.method == "GET" and seen.path.partition("?")[0].endswith("/models") and not scripted

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _version = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    k, v = line.split(":", 1)
                    headers[k.strip().lower()] = v.strip()
            length = int(headers.get("content-length", "0"))
            raw = await reader.readexactly(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw
            seen = SeenRequest(method, path, headers, body)
            if self._is_listing(seen):
                self.listings.append(seen)
                await asyncio.sleep(self.models_pause)
                reply = (
                    json_reply(404, {"error": {"message": "no /models here"}})
                    if self.models is None
                    else json_reply(200, {"object": "list", "data": self.models})
                )
            else:
                self.requests.append(seen)
                reply = self.replies.pop(0) if self.replies else self.fallback
            if reply is None:
                reply = json_reply(500, {"error": {"message": "no reply queued in the test server"}})
            status_line = f"HTTP/1.1 {reply.status} X\r\n"
            header_lines = "".join(f"{k}: {v}\r\n" for k, v in reply.headers.items())
            writer.write((status_line + header_lines + "connection: close\r\n\r\n").encode())
            await writer.drain()
            for i, chunk in enumerate(reply.chunks):
                if reply.drop_after is not None and i >= reply.drop_after:
                    break
                if isinstance(chunk, float):
                    await asyncio.sleep(chunk)
                    continue
                writer.write(chunk)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
