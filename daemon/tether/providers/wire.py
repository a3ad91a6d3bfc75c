"""The providers' HTTP/1.1 client: h11 over asyncio streams, kept-alive connections, proxies, TLS.

Owns: `WireClient.open(...) -> Response` (the `Transport` a test or the replay also implements), one
provider's connection pool, the connect/write/first-byte deadlines, proxies, and the `WireError` tree.
Must not: set a deadline per body read (the caller's idle watch owns it), or pool a half-read connection.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

import anyio
import h11
import orjson

from .proxies import Proxy, ProxyRefused, ProxyRoutes
from .tls import TlsContext
from .wire_body import body_reads, decoded, refused_coding

if TYPE_CHECKING:
    import ssl
    from collections.abc import AsyncIterator, Callable, Mapping

# The error tree:
#     WireError                  (a request failed below HTTP)
#     ├── ConnectError, ReadError, WriteError, RemoteProtocolError, LocalProtocolError,
#     │   HTTPStatusError
#     └── WireTimeout: ConnectTimeout, ReadTimeout, WriteTimeout


class WireError(Exception):
    """A request failed below HTTP (no status to judge it by)."""


class ConnectError(WireError):
    pass


class ReadError(WireError):
    pass


class WriteError(WireError):
    pass


class RemoteProtocolError(WireError):
    pass


class LocalProtocolError(WireError):
    pass


class HTTPStatusError(WireError):
    pass


class WireTimeout(WireError):
    pass


class ConnectTimeout(WireTimeout):
    pass


class ReadTimeout(WireTimeout):
    pass


class WriteTimeout(WireTimeout):
    pass


class Response:
    """A response's head and its body as an async iterator of the bytes each read delivered
    (decoded when the server content-encoded it anyway); `sock` is the connection's socket
    for an idle watch, None for a stand-in transport's response."""

    __slots__ = ("status", "headers", "chunks", "sock", "_on_close")

    def __init__(
        self,
        status: int,
        headers: Mapping[str, str],
        chunks: AsyncIterator[bytes],
        sock: Any = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self.status = status
        self.headers = {k.lower(): v for k, v in headers.items()}
        self.chunks = chunks
        self.sock = sock
        self._on_close = on_close

    async def read(self) -> bytes:
        return b"".join([chunk async for chunk in self.chunks])

    async def aclose(self) -> None:
        aclose = getattr(self.chunks, "aclose", None)
        if aclose is not None:
            await aclose()
        if self._on_close is not None:
            self._on_close()


class Transport(Protocol):
    async def open(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response: ...

    async def aclose(self) -> None: ...


class _Connection:
    __slots__ = ("reader", "writer", "h11", "key", "pooled", "received", "cycle")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, key: tuple[Any, ...]) -> None:
        self.reader = reader
        self.writer = writer
        self.h11 = h11.Connection(h11.CLIENT)
        self.key = key
        self.pooled = False
        self.received = 0  # bytes of the current response read so far
        self.cycle = 0  # requests completed on it: a response closes only its own

    def usable(self) -> bool:
        """Still open, nothing unread: a server that closed a kept-alive connection shows here."""
        return not self.writer.transport.is_closing() and not self.reader.at_eof() and self.reader.exception() is None

    def close_cycle(self, cycle: int) -> None:
        """Close it unless the response of request `cycle` was read to its end (then the
        connection is in the pool, or serving another request)."""
        if self.cycle == cycle:
            self.close()

    def close(self) -> None:
        if not self.pooled:
            self.writer.transport.abort()  # at once: no half-read response survives a cancel


def _target(url: str) -> tuple[str, str, int, str]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ConnectError(f"{url!r} is not an http:// or https:// URL")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return scheme, parts.hostname, parts.port or (443 if scheme == "https" else 80), path


def _host_header(scheme: str, host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return shown if port == (443 if scheme == "https" else 80) else f"{shown}:{port}"


class WireClient:
    """One provider's client: its connections, proxies and TLS context."""

    def __init__(
        self,
        base_url: str,
        env: Mapping[str, str],
        *,
        connect: float = 10.0,
        first_byte: float = 300.0,
        write: float = 30.0,
    ) -> None:
        self.connect_timeout, self.first_byte_timeout, self.write_timeout = connect, first_byte, write
        self._env = dict(env)
        self._routes = ProxyRoutes(env)
        # started now, so loading the CA bundle overlaps the rest of the turn's start
        self._tls = TlsContext(env) if base_url.lower().startswith("https:") else None
        self._idle: dict[tuple[Any, ...], list[_Connection]] = {}

    async def open(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        scheme, host, port, path = _target(url)
        try:
            proxy = self._routes.proxy_for(scheme, host)
        except ProxyRefused as exc:
            raise ConnectError(str(exc)) from None
        absolute = proxy is not None and scheme == "http"  # a plain proxy forwards the request itself
        key = (scheme, host, port, proxy)
        request_headers = [("host", _host_header(scheme, host, port)), ("user-agent", "tether")]
        request_headers += [(k, v) for k, v in headers.items()]
        if absolute and proxy is not None and proxy.authorization:
            request_headers.append(("proxy-authorization", proxy.authorization))
        if body or method in ("POST", "PUT", "PATCH"):
            request_headers.append(("content-length", str(len(body))))
        try:
            request = h11.Request(method=method, target=url if absolute else path, headers=request_headers)
        except h11.LocalProtocolError:  # h11's text would quote the header: maybe the key
            raise LocalProtocolError(
                "a request header holds a character HTTP forbids (a line break?): check the API key and the base URL"
            ) from None
        for attempt in (1, 2):
            conn = self._pooled(key) if attempt == 1 else None  # the retry: a new one
            reused = conn is not None
            if conn is None:
                conn = await self._connect(key, scheme, host, port, proxy)
            try:
                head = await self._exchange(conn, request, body)
            except (ReadError, WriteError, RemoteProtocolError):
                conn.close()
                if reused and conn.received == 0 and attempt == 1:
                    continue  # the server had closed the kept-alive connection: once more, afresh
                raise
            except BaseException:
                conn.close()
                raise
            return self._response(conn, head)
        raise AssertionError("unreachable")  # pragma: no cover

    def _pooled(self, key: tuple[Any, ...]) -> _Connection | None:
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            conn.pooled = False
            if conn.usable():
                return conn
            conn.close()
        return None

    def _response(self, conn: _Connection, head: h11.Response) -> Response:
        headers: dict[str, str] = {}
        for name, value in head.headers:
            key, text = name.decode("latin-1"), value.decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        refused = refused_coding(headers.get("content-encoding", ""))
        if refused is not None:
            conn.close()
            raise RemoteProtocolError(refused)
        chunks = decoded(
            body_reads(conn, self._release, _read_errors), headers.get("content-encoding", ""), _read_errors
        )
        cycle = conn.cycle
        return Response(
            head.status_code, headers, chunks, conn.writer.get_extra_info("socket"), lambda: conn.close_cycle(cycle)
        )

    def _release(self, conn: _Connection) -> None:
        """The response was read to its end: keep the connection for the next request if
        both sides may go on, else close it."""
        if conn.h11.our_state is h11.DONE and conn.h11.their_state is h11.DONE and conn.usable():
            conn.h11.start_next_cycle()
            conn.received = 0
            conn.cycle += 1
            conn.pooled = True
            self._idle.setdefault(conn.key, []).append(conn)
        else:
            conn.close()

    async def _exchange(self, conn: _Connection, request: h11.Request, body: bytes) -> h11.Response:
        data = conn.h11.send(request) or b""
        if body:
            data += conn.h11.send(h11.Data(data=body)) or b""
        data += conn.h11.send(h11.EndOfMessage()) or b""
        try:
            with anyio.fail_after(self.write_timeout):
                conn.writer.write(data)
                await conn.writer.drain()
        except TimeoutError:
            raise WriteTimeout(f"sending the request took more than {self.write_timeout:.0f} s") from None
        except OSError as exc:
            raise WriteError(str(exc) or type(exc).__name__) from None
        try:
            with anyio.fail_after(self.first_byte_timeout):
                return await _read_head(conn)
        except TimeoutError:
            raise ReadTimeout(f"no answer within {self.first_byte_timeout:.0f} s") from None

    async def _connect(
        self, key: tuple[Any, ...], scheme: str, host: str, port: int, proxy: Proxy | None
    ) -> _Connection:
        try:
            with anyio.fail_after(self.connect_timeout):
                tls = await self._tls_context() if scheme == "https" else None
                if proxy is None:
                    reader, writer = await asyncio.open_connection(
                        host, port, ssl=tls, server_hostname=host if tls else None
                    )
                else:
                    reader, writer = await asyncio.open_connection(proxy.host, proxy.port)
                    try:
                        if tls is not None:
                            await _tunnel(reader, writer, host, port, proxy)
                            await writer.start_tls(tls, server_hostname=host)
                    except BaseException:
                        writer.transport.abort()
                        raise
        except TimeoutError:
            raise ConnectTimeout(f"no connection within {self.connect_timeout:.0f} s") from None
        except OSError as exc:  # ssl.SSLError too: certificate and host-name failures say so
            raise ConnectError(str(exc) or type(exc).__name__) from None
        return _Connection(reader, writer, key)

    async def _tls_context(self) -> ssl.SSLContext:
        if self._tls is None:
            self._tls = TlsContext(self._env)
        try:
            return await self._tls.get()
        except OSError as exc:
            raise ConnectError(f"cannot load the CA certificates (SSL_CERT_FILE/SSL_CERT_DIR?): {exc}") from None

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for conn in idle:
                conn.pooled = False
                conn.close()
        self._idle.clear()


async def get_json(transport: Transport, url: str, headers: Mapping[str, str], timeout: float) -> Any:
    """`GET url` and its JSON answer, within `timeout` in all; WireError (HTTPStatusError
    for a 4xx/5xx answer) or ValueError (not JSON)."""
    try:
        with anyio.fail_after(timeout):
            response = await transport.open("GET", url, {**headers, "accept": "application/json"}, b"")
            try:
                raw = await response.read()
            finally:
                await response.aclose()
    except TimeoutError:
        raise ReadTimeout(f"no answer from {url} within {timeout:.0f} s") from None
    if response.status >= 400:
        raise HTTPStatusError(f"HTTP {response.status} from {url}")
    return orjson.loads(raw)


def _read_errors(exc: Exception) -> WireError:
    """A body read's failure as the tree's error."""
    if isinstance(exc, h11.RemoteProtocolError):
        return RemoteProtocolError(str(exc))
    return ReadError(str(exc) or type(exc).__name__)


async def _read_head(conn: _Connection) -> h11.Response:
    connection = conn.h11
    while True:
        try:
            event = connection.next_event()
        except h11.RemoteProtocolError as exc:
            raise RemoteProtocolError(str(exc)) from None
        if event is h11.NEED_DATA:
            try:
                data = await conn.reader.read(65536)
            except OSError as exc:
                raise ReadError(str(exc) or type(exc).__name__) from None
            conn.received += len(data)
            connection.receive_data(data)
        elif isinstance(event, h11.Response):
            return event
        elif isinstance(event, h11.ConnectionClosed):
            raise RemoteProtocolError("the server closed the connection without answering")
        # an informational (1xx) response: the real one follows


async def _tunnel(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, port: int, proxy: Proxy
) -> None:
    """A CONNECT tunnel through `proxy` to host:port (TLS to the target goes inside it)."""
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    auth = f"Proxy-Authorization: {proxy.authorization}\r\n" if proxy.authorization else ""
    writer.write(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n{auth}\r\n".encode("latin-1"))
    await writer.drain()
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
        raise ConnectError(f"the proxy of {proxy.variable} ({proxy.host}:{proxy.port}) broke off the tunnel") from exc
    status_line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[1].startswith("2"):
        writer.transport.abort()
        raise ConnectError(
            f"the proxy of {proxy.variable} ({proxy.host}:{proxy.port}) refused the tunnel to {authority}: {status_line}"
        )
