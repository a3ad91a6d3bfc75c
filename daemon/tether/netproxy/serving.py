"""One command's proxy: started before the command, stopped after it, refusals reported.

Owns: the proxy socket's private directory, serving `DomainProxy` there while the command
runs, and the lines the model and the user get for what it refused. Must not: start a
proxy for a backend that cannot confine the command to it (Landlock: no network at all).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from typing import TYPE_CHECKING, NamedTuple

import anyio

from .proxy import DomainProxy, ProxyRules, refusal_lines

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

__all__ = ["LANDLOCK_NOTICE", "CommandProxy", "command_proxy", "report_refusals"]

LANDLOCK_NOTICE = (
    "network: allowlist mode needs bubblewrap (Landlock has no network namespace to confine a "
    "command to the proxy), so this command ran without the network"
)


class CommandProxy(NamedTuple):
    socket: str  # the unix socket bound into the sandbox
    proxy: DomainProxy
    bundle: str | None  # the trust bundle with the daemon's CA (HTTPS credentials), or None


@contextlib.asynccontextmanager
async def command_proxy(rules: ProxyRules) -> AsyncIterator[CommandProxy]:
    """The proxy's socket path, the proxy and its trust bundle, served until the block ends."""
    from tether.shared.proxy import runtime_dir

    bundle = await anyio.to_thread.run_sync(rules.intercept.ensure_bundle) if rules.intercept else None
    directory = tempfile.mkdtemp(prefix="net-", dir=runtime_dir(os.environ))
    path = os.path.join(directory, "proxy.sock")
    proxy = DomainProxy(rules)
    try:
        listener = await anyio.create_unix_listener(path)
        async with listener, anyio.create_task_group() as group:
            group.start_soon(proxy.serve, listener)
            try:
                yield CommandProxy(path, proxy, bundle)
            finally:
                group.cancel_scope.cancel()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def report_refusals(proxy: DomainProxy, on_notice: Callable[[str], None] | None) -> str:
    """The refusal lines for the tool result ("" when none), also sent as a notice."""
    lines = refusal_lines(proxy.refusals)
    if not lines:
        return ""
    if on_notice is not None:
        on_notice("; ".join(lines) + " (allow a domain with allowed_domains in your user config)")
    return "\n" + "\n".join(lines)
