"""The allowlist proxy one sandboxed command reaches (through bridge.py's loopback port).

Owns: serving CONNECT and absolute-URI HTTP, refusing a malformed head or a refused host,
port or address before connecting, adding the user's credential header, connecting to the
address it checked, and recording refusals (docs/decisions/0013-netproxy.md).
Must not: connect anywhere it has not checked, or show a credential to the command.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import re
import socket
import ssl
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.tls import TLSStream

from .rules import address_refusal, domain_refusal, host_text, parse_ip
from .tls import Interceptor, interceptor

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from tether.approvals import ApprovalGate, ApprovalRequest

    from .asking import AskDomain

__all__ = ["DomainProxy", "ProxyRules", "Refusal", "proxy_rules", "refusal_lines"]

log = logging.getLogger("tether.netproxy")

_HEAD_LIMIT = 16 * 1024
_HEAD_SECONDS = 10.0
_CONNECT_SECONDS = 15.0
_CHUNK = 64 * 1024
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_DROPPED = {b"host", b"connection", b"keep-alive", b"proxy-connection", b"proxy-authorization", b"te", b"upgrade"}


@dataclass(frozen=True, slots=True)
class ProxyRules:
    """What one command may reach: host patterns, and credential headers by exact host."""

    domains: tuple[str, ...]
    credentials: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # host -> (header, value)
    # the session's "allow for this session" hosts: shared, grown by `ask`'s answers
    session_domains: set[str] = field(default_factory=set)
    # asks the user about a refused host (asking.py); None: refuse at once (unattended)
    ask: AskDomain | None = None
    # makes `ask` for one call (call id, command), or None where the session's mode does
    # not ask (`full-auto`); set per turn, used by `per_call`
    ask_for: Callable[[str, str], AskDomain | None] | None = None
    # TLS interception for the hosts in `credentials` (tls.py); None: no credentials
    intercept: Interceptor | None = None
    remember: Callable[[str], None] | None = None  # stores an "always" answer

    def per_call(self, gate: ApprovalGate | None, request: ApprovalRequest) -> ProxyRules:
        """One command's rules: these, the domains the table form of `network_commands`
        adds for it, and asking about others where the session's mode asks."""
        if request.kind != "execute" or request.command is None:
            return self
        extra = gate.network_domains(request.command) if gate is not None else ()
        ask = self.ask_for(request.call_id, request.command) if self.ask_for is not None else None
        return dataclasses.replace(self, domains=self.domains + extra, ask=ask)


@dataclass(frozen=True, slots=True)
class Refusal:
    host: str
    port: int
    reason: str

    def line(self) -> str:
        return f"network: blocked {self.host}:{self.port} ({self.reason})"


def proxy_rules(domains: Sequence[str], credentials: Sequence[str]) -> ProxyRules:
    """The rules from the settings: each "host header ENV" credential valued from the
    daemon's environment (hardening.py keeps `os.environ`'s copy); one whose variable is
    unset is left out (`tether doctor` says so)."""
    found: dict[str, tuple[str, str]] = {}
    for entry in credentials:
        host, header, env = entry.split()
        value = os.environ.get(env, "")
        if value and "\r" not in value and "\n" not in value:
            found[host] = (header, value)
    return ProxyRules(tuple(domains), found, intercept=interceptor() if found else None)


class _BadRequest(Exception):
    pass


class DomainProxy:
    """Serves one command's connections on a listener; `refusals` collects what it refused."""

    def __init__(self, rules: ProxyRules) -> None:
        self.rules = rules
        self.refusals: list[Refusal] = []
        self._asking = anyio.Lock()  # one question at a time; a second connection waits for it
        self._denied: set[str] = set()  # asked once per command: a loop must not flood the user

    async def serve(self, listener: anyio.abc.Listener[anyio.abc.ByteStream]) -> None:
        await listener.serve(self._handle)

    async def _handle(self, client: anyio.abc.ByteStream) -> None:
        try:
            await self._handle_one(client)
        except Exception:  # a bug here ends this connection, not the command's proxy
            log.exception("network proxy: a connection failed")

    async def _handle_one(self, client: anyio.abc.ByteStream) -> None:
        async with client:
            buffered = BufferedByteReceiveStream(client)
            try:
                with anyio.fail_after(_HEAD_SECONDS):  # slowloris: the whole head in time
                    head = await buffered.receive_until(b"\r\n\r\n", _HEAD_LIMIT)
                method, target, headers = _parse_head(head)
            except (_BadRequest, anyio.IncompleteRead, anyio.DelimiterNotFound, TimeoutError) as error:
                await _answer(client, 400, str(error) or "bad request head")
                return
            except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                return
            await self._forward(client, buffered, method, target, headers)

    async def _forward(
        self,
        client: anyio.abc.ByteStream,
        buffered: BufferedByteReceiveStream,
        method: bytes,
        target: bytes,
        headers: list[tuple[bytes, bytes]],
    ) -> None:
        try:
            host, port, path = _target(method, target)
        except _BadRequest as error:
            await _answer(client, 400, str(error))
            return
        upstream = await self._connect(host, port)
        if isinstance(upstream, Refusal):
            await _answer(client, 403, upstream.line())
            return
        async with upstream:
            if method == b"CONNECT":
                await client.send(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if port == 443 and host in self.rules.credentials and self.rules.intercept is not None:
                    await self._intercepted(client, buffered, upstream, host, port)
                    return
            else:
                await upstream.send(self._origin_head(method, path, host, port, headers))
            await _splice(client, buffered, upstream)

    async def _intercepted(
        self,
        client: anyio.abc.ByteStream,
        buffered: BufferedByteReceiveStream,
        upstream: anyio.abc.ByteStream,
        host: str,
        port: int,
    ) -> None:
        """A tunnel to a host with a credential: TLS ended here with this daemon's CA's
        certificate, the first request's header added, then bytes both ways."""
        assert self.rules.intercept is not None
        if buffered.buffer:  # bytes before the tunnel was answered: not a TLS client that waited
            return
        context = await anyio.to_thread.run_sync(self.rules.intercept.server_context, host)
        try:
            with anyio.fail_after(_HEAD_SECONDS):
                inner = await TLSStream.wrap(client, server_side=True, ssl_context=context, standard_compatible=False)
                reader = BufferedByteReceiveStream(inner)
                head = await reader.receive_until(b"\r\n\r\n", _HEAD_LIMIT)
                method, target, headers = _parse_head(head)
            if not target.startswith(b"/"):
                raise _BadRequest("inside the tunnel only origin-form requests (GET /path) are sent on")
            outer = await TLSStream.wrap(
                upstream, hostname=host, ssl_context=ssl.create_default_context(), standard_compatible=False
            )
        except (
            _BadRequest,
            anyio.IncompleteRead,
            anyio.DelimiterNotFound,
            anyio.EndOfStream,
            TimeoutError,
            anyio.BrokenResourceError,
            ssl.SSLError,
            OSError,
        ) as error:
            self._refuse(host, port, f"intercepted TLS failed: {error}")
            return
        await outer.send(self._origin_head(method, target, host, port, headers))
        await _splice(inner, reader, outer)

    async def _connect(self, host: str, port: int) -> anyio.abc.SocketStream | Refusal:
        """A connection to a checked address of `host`, or the refusal (recorded)."""
        reason = self._domain_refusal(host, port)
        if reason is not None and reason.startswith("host not in") and self.rules.ask is not None:
            reason = await self._ask(host, port)
        addresses: list[str] = []
        if reason is None:
            reason, addresses = await _checked_addresses(host, port)
        for address in addresses:
            with contextlib.suppress(OSError, TimeoutError):
                with anyio.fail_after(_CONNECT_SECONDS):
                    return await anyio.connect_tcp(address, port)  # an address: no second lookup
            reason = f"could not connect to {address}"
        return self._refuse(host, port, reason or "no address")

    def _domain_refusal(self, host: str, port: int) -> str | None:
        return domain_refusal(host, port, (*self.rules.domains, *self.rules.session_domains))

    async def _ask(self, host: str, port: int) -> str | None:
        """The connection is held while the user is asked; why it is refused, or None."""
        assert self.rules.ask is not None
        async with self._asking:
            if self._domain_refusal(host, port) is None:  # allowed while this one waited
                return None
            if host in self._denied:
                return "not in allowed_domains; the user denied it"
            answer = await self.rules.ask(host, port)
            if answer not in ("session", "always"):
                self._denied.add(host)
                return "not in allowed_domains; the user denied it"
            self.rules.session_domains.add(host)
            if answer == "always" and self.rules.remember is not None:
                self.rules.remember(host)
            return self._domain_refusal(host, port)

    def _refuse(self, host: str, port: int, reason: str) -> Refusal:
        refusal = Refusal(host, port, reason)
        if refusal not in self.refusals:
            self.refusals.append(refusal)
        return refusal

    def _origin_head(
        self, method: bytes, path: bytes, host: str, port: int, headers: list[tuple[bytes, bytes]]
    ) -> bytes:
        credential = self.rules.credentials.get(host)
        replaced = credential[0].lower().encode() if credential else b""
        lines = [method + b" " + path + b" HTTP/1.1"]
        shown = host if parse_ip(host) is None or ":" not in host else f"[{host}]"
        lines.append(b"Host: " + (shown if port in (80, 443) else f"{shown}:{port}").encode())
        lines += [
            name + b": " + value for name, value in headers if name.lower() not in _DROPPED and name.lower() != replaced
        ]
        if credential:
            lines.append(f"{credential[0]}: {credential[1]}".encode())
        lines.append(b"Connection: close")
        return b"\r\n".join(lines) + b"\r\n\r\n"


async def _checked_addresses(host: str, port: int) -> tuple[str | None, list[str]]:
    """The addresses of `host` a command may connect to, or why there are none."""
    try:
        found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        return f"name lookup failed: {error.strerror or error}", []
    allowed: list[str] = []
    reason: str | None = None
    for _family, _type, _proto, _name, sockaddr in found:
        address = parse_ip(str(sockaddr[0]).partition("%")[0])
        why = address_refusal(address) if address is not None else "not an IP address"
        if why is None and str(address) not in allowed:
            allowed.append(str(address))
        reason = reason or (f"resolves to {why}" if why else None)
    return (None if allowed else reason), allowed


def _parse_head(head: bytes) -> tuple[bytes, bytes, list[tuple[bytes, bytes]]]:
    if len(head) > _HEAD_LIMIT:  # receive_until checks its limit only between reads
        raise _BadRequest(f"the request head is over {_HEAD_LIMIT // 1024} KiB")
    lines = head.split(b"\r\n")
    if any(b"\n" in line or b"\r" in line or b"\0" in line for line in lines):
        raise _BadRequest("a bare CR, LF or NUL in the request head")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not _TOKEN.fullmatch(parts[0]) or parts[2] not in (b"HTTP/1.1", b"HTTP/1.0"):
        raise _BadRequest("not an HTTP/1.x request line")
    headers: list[tuple[bytes, bytes]] = []
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not _TOKEN.fullmatch(name):  # also folded (obs-fold) lines
            raise _BadRequest("an invalid header line")
        headers.append((name, value.strip(b" \t")))
    names = [name.lower() for name, _ in headers]
    if (b"transfer-encoding" in names and b"content-length" in names) or names.count(b"content-length") > 1:
        raise _BadRequest("an ambiguous body length (Content-Length with Transfer-Encoding, or twice)")
    return parts[0], parts[1], headers


def _target(method: bytes, target: bytes) -> tuple[str, int, bytes]:
    """(host, port, origin-form path) of a CONNECT authority or an http:// absolute URI."""
    if method == b"CONNECT":
        authority, path = target, b""
    elif target[:7].lower() == b"http://":
        authority, slash, rest = target[7:].partition(b"/")
        path = slash + rest or b"/"
    else:
        raise _BadRequest("only CONNECT host:port and absolute http:// URIs are proxied (https: use CONNECT)")
    text = authority.decode("ascii", "replace")
    if "@" in text:
        raise _BadRequest("user information in the authority is not accepted")
    name, colon, port_text = text.rpartition(":")
    if not colon or (name.endswith(":") and not name.startswith("[")):
        name, port_text = text, "" if method != b"CONNECT" else "-"
    port = int(port_text) if port_text.isdigit() and len(port_text) <= 5 else (80 if port_text == "" else -1)
    host = host_text(name)
    if host is None or not 0 < port < 65536:
        raise _BadRequest(f"not a host and port: {text[:100]!r}")
    return host, port, path


async def _answer(client: anyio.abc.ByteStream, status: int, why: str) -> None:
    text = {400: "Bad Request", 403: "Forbidden"}[status]
    body = (why.replace("\r", " ").replace("\n", " ") + "\n").encode()
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        await client.send(
            f"HTTP/1.1 {status} {text}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
            f"Connection: close\r\n\r\n".encode()
            + body
        )


async def _splice(
    client: anyio.abc.ByteStream, buffered: BufferedByteReceiveStream, upstream: anyio.abc.ByteStream
) -> None:
    """Bytes both ways until both sides are done (what `buffered` read ahead first); a TLS
    side cannot half-close, so the first end there ends both."""

    async def pump(source: anyio.abc.ByteReceiveStream, sink: anyio.abc.ByteStream) -> None:
        with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            while True:
                await sink.send(await source.receive(_CHUNK))
        try:
            await sink.send_eof()
        except NotImplementedError:
            group.cancel_scope.cancel()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass

    async with anyio.create_task_group() as group:
        group.start_soon(pump, buffered, upstream)
        group.start_soon(pump, upstream, client)


def refusal_lines(refusals: Sequence[Refusal]) -> list[str]:
    """One line a refused host (its first refusal), for the tool result and the notice."""
    seen: dict[str, Refusal] = {}
    for refusal in refusals:
        seen.setdefault(refusal.host, refusal)
    return [f"network: blocked {r.host}:{r.port} ({r.reason})" for r in seen.values()]
