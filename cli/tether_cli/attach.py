"""`tether run --attach`: the one-shot turn runs in the user's shared daemon.

Owns: `connect_shared`, the connector that finds (or starts) the shared daemon as the proxy
would (`tether.shared.proxy.connect_or_start`), names the workspace, and hands over the
socket; another window that loads the session sees the turn. Must not: serve anything here.
"""

from __future__ import annotations

import asyncio
import os
import socket
from typing import TYPE_CHECKING

from tether.shared.proxy import ProxyError, connect_or_start, preamble, split_args
from tether_client import DaemonStartError, JsonRpcPeer, TetherClient

if TYPE_CHECKING:
    from pathlib import Path

    from tether_protocol.peer import RequestCallback


async def connect_shared(serve_args: list[str], workspace: Path, on_request: RequestCallback | None) -> TetherClient:
    flags, root, _framing = split_args(["serve", "--workspace", str(workspace), *serve_args])
    try:
        sock = connect_or_start(flags, os.environ)
    except ProxyError as exc:
        raise DaemonStartError(f"tether: {exc}", 1) from None
    sock.sendall(preamble(root, "lsp"))
    stream = socket.socket(fileno=sock.detach())  # the proxy's is a bare `_socket` one
    reader, writer = await asyncio.open_unix_connection(sock=stream, limit=1 << 24)
    peer = JsonRpcPeer(reader, writer, framing="lsp", on_request=on_request)
    peer.start()
    return TetherClient(peer)
