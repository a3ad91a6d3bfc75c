"""What the proxy allows: host patterns, ports and the addresses a name may resolve to.

Owns: the default `allowed_domains`, matching host and port against patterns, checking a
host's spelling, and refusing every address that is not public unicast.
Must not: resolve names or open connections (proxy.py does, on the address checked here).
"""

from __future__ import annotations

import ipaddress
import re
from typing import TYPE_CHECKING

from tether.config.settings import DEFAULT_DOMAINS

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["DEFAULT_DOMAINS", "address_refusal", "domain_refusal", "host_text", "parse_ip"]

_PORTS = (80, 443)
_HOST = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*")
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_KINDS = (
    ("is_unspecified", "unspecified"),
    ("is_loopback", "loopback"),
    ("is_link_local", "link-local (cloud metadata)"),
    ("is_multicast", "multicast"),
    ("is_private", "private"),
    ("is_reserved", "reserved"),
)
IP = ipaddress.IPv4Address | ipaddress.IPv6Address


def host_text(host: str) -> str | None:
    """`host` lowercased, without a trailing dot and IPv6 brackets; None: not a host name
    nor an IP address (control characters, spaces, `@`, over-long names)."""
    host = host.lower()
    if host.startswith("[") and host.endswith("]"):
        return host[1:-1] if parse_ip(host[1:-1]) is not None else None
    host = host[:-1] if host.endswith(".") else host
    if parse_ip(host) is not None:
        return host
    return host if len(host) <= 253 and _HOST.fullmatch(host) else None


def parse_ip(text: str) -> IP | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def domain_refusal(host: str, port: int, patterns: Sequence[str]) -> str | None:
    """Why `host:port` is not allowed by `patterns` (None: it is). An IP address is
    allowed only when listed as it is written."""
    listed = [_split(pattern) for pattern in patterns]
    names = [(name, named_port) for name, named_port in listed if _matches(name, host)]
    if not names:
        what = "IP address" if parse_ip(host) is not None else "host"
        return f"{what} not in allowed_domains"
    if any(named_port == port or (named_port is None and port in _PORTS) for _, named_port in names):
        return None
    return f"port {port} not allowed (only 80 and 443, unless allowed_domains lists {host}:{port})"


def _split(pattern: str) -> tuple[str, int | None]:
    pattern = pattern.strip().lower()
    name, colon, port = pattern.rpartition(":")
    if colon and port.isdigit() and not name.endswith(":"):  # not the tail of a bare IPv6 address
        return name.strip("[]"), int(port)
    return pattern.strip("[]"), None


def _matches(pattern: str, host: str) -> bool:
    if pattern.startswith("*."):
        return parse_ip(host) is None and host.endswith(pattern[1:])
    return host == pattern


def address_refusal(address: IP) -> str | None:
    """Why a command must not connect to `address` (None: a public unicast address)."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_v4(address)
        if embedded is not None:
            inner = address_refusal(embedded)
            return f"{inner} (IPv4 {embedded} inside IPv6)" if inner else None
    for attribute, kind in _KINDS:
        if getattr(address, attribute):
            return f"{address} is a {kind} address"
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return f"{address} is a shared (CGNAT) address"
    if not address.is_global:
        return f"{address} is not a public address"
    return None


def _embedded_v4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # the client's address: the one traffic is relayed to
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None
