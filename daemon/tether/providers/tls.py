"""The TLS settings of a provider's HTTP client, built off the event loop.

Owns: which CA store verifies a provider's server (`SSL_CERT_FILE`, `SSL_CERT_DIR`, certifi, the system
store, as httpx did), loaded in a worker thread when the provider is built; `http://` loads nothing.
Must not: ever turn verification off, or block the event loop on the bundle.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ssl
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping


def verifying_context(env: Mapping[str, str]) -> ssl.SSLContext:
    """httpx's default with trust_env: `SSL_CERT_FILE`, `SSL_CERT_DIR`, else certifi's bundle
    (the system store when certifi is not installed)."""
    if env.get("SSL_CERT_FILE"):
        context = ssl.create_default_context(cafile=env["SSL_CERT_FILE"])
    elif env.get("SSL_CERT_DIR"):
        context = ssl.create_default_context(capath=env["SSL_CERT_DIR"])
    else:
        try:
            import certifi
        except ImportError:
            context = ssl.create_default_context()
        else:
            context = ssl.create_default_context(cafile=certifi.where())
    context.set_alpn_protocols(["http/1.1"])
    return context


class TlsContext:
    """A verifying context being built in a worker thread; `get()` awaits it."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._future: concurrent.futures.Future[ssl.SSLContext] = concurrent.futures.Future()
        env = dict(env)
        threading.Thread(target=self._build, args=(env,), name="tether-tls", daemon=True).start()

    def _build(self, env: Mapping[str, str]) -> None:
        try:
            self._future.set_result(verifying_context(env))
        except BaseException as exc:
            self._future.set_exception(exc)

    async def get(self) -> ssl.SSLContext:
        if self._future.done():
            return self._future.result()
        # shielded: a cancelled waiter must not cancel the build the next request needs
        return await asyncio.shield(asyncio.wrap_future(self._future))
