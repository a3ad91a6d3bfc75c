"""Which proxy a provider's request goes through, read from the environment as httpx's trust_env did.

Owns: `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY` in either case (lower case wins, `HTTP_PROXY`
ignored under CGI), a value without a scheme meaning `http://`, and NO_PROXY's `*`, hosts, IPs, `localhost`.
Must not: connect anywhere (wire.py does), or accept an `https://` proxy (refused naming its variable).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:
    from collections.abc import Mapping


class ProxyRefused(ValueError):
    """A proxy variable names a proxy this client cannot use."""


@dataclass(frozen=True, slots=True)
class Proxy:
    host: str
    port: int
    variable: str  # the environment variable it came from, for error messages
    authorization: str = ""  # a `Proxy-Authorization` value from the URL's user:password


def _proxy_variables(env: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """scheme -> (value, variable name); lower-case names override upper-case ones."""
    found: dict[str, tuple[str, str]] = {}
    for lower_pass in (False, True):
        for name, value in env.items():
            if name.lower().endswith("_proxy") and (name == name.lower()) == lower_pass and value.strip():
                found[name[:-6].lower()] = (value.strip(), name)
    if "REQUEST_METHOD" in env:  # CGI: HTTP_PROXY may be a request header (httpoxy)
        found.pop("http", None)
    return found


def _shown(value: str) -> str:
    """The proxy URL for an error message, without its user and password."""
    scheme, sep, rest = value.rpartition("://")
    return f"{scheme}{sep}***@{rest.rpartition('@')[2]}" if "@" in rest else value


def _parse_proxy(value: str, variable: str) -> Proxy:
    url = urlsplit(value if "://" in value else f"http://{value}")
    if url.scheme.lower() != "http":
        raise ProxyRefused(
            f"{variable}={_shown(value)!r} is a {url.scheme}:// proxy; Tether's model client speaks to a "
            f"proxy in plain HTTP only (an https:// model server is still reached over TLS through "
            f"the proxy's CONNECT tunnel): set {variable} to the proxy's http:// address"
        )
    if not url.hostname:
        raise ProxyRefused(f"{variable}={_shown(value)!r} names no proxy host; set it to http://HOST:PORT")
    authorization = ""
    if url.username is not None:
        pair = f"{unquote(url.username)}:{unquote(url.password or '')}".encode()
        authorization = "Basic " + base64.b64encode(pair).decode("ascii")
    return Proxy(url.hostname, url.port or 80, variable, authorization)


def _bypasses(no_proxy: str, host: str) -> bool:
    host = host.lower().strip("[]")
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if not entry:
            continue
        if entry == "*":
            return True
        entry = entry.partition("://")[2] or entry  # "http://host" entries: the host
        entry = entry.strip("[]")
        if entry.startswith("."):
            if host.endswith(entry):
                return True
        elif host == entry or host.endswith("." + entry):
            return True
    return False


class ProxyRoutes:
    """The proxies of one client, fixed when it is built (as httpx read them once)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        found = _proxy_variables(env)
        self._no_proxy = found.pop("no", ("", ""))[0]
        self._by_scheme: dict[str, tuple[str, str]] = {
            scheme: found[scheme] for scheme in ("http", "https", "all") if scheme in found
        }

    def proxy_for(self, scheme: str, host: str) -> Proxy | None:
        """The proxy a request to `scheme://host` goes through, or None for a direct one;
        raises ProxyRefused for a proxy this client cannot use."""
        chosen = self._by_scheme.get(scheme) or self._by_scheme.get("all")
        if chosen is None or _bypasses(self._no_proxy, host):
            return None
        return _parse_proxy(*chosen)
