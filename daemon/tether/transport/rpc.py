"""The daemon's end of the JSON-RPC peer.

Owns: the daemon's choices on top of `tether_protocol.peer.JsonRpcPeer` — string ids for
its own requests (`tether-N`), cancels spelled the way the client's protocol spells them
(LSP `$/cancelRequest` until an ACP client initializes, then `$/cancel_request`), params
validated by the protocol's converter, bugs reported as "details in the daemon log", and
test failpoints (`TETHER_FAILPOINTS`). Must not: know session or agent semantics; handlers
live in `tether.server`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from tether_protocol.peer import (
    JsonRpcPeer,
    PeerOptions,
    RawResult,
    RequestFailed,
    Route,
    current_request_id,
)

__all__ = ["ClientRequestFailed", "RawResult", "Route", "TetherRPC", "current_request_id"]

# The client answered one of our requests with an error.
ClientRequestFailed = RequestFailed


def _structure(params: Mapping[str, Any] | None, cls: type, method: str) -> Any:
    # cattrs: paid on the first typed request, not at start
    from tether_protocol._converter import structure

    return structure(params, cls, method=method)


class TetherRPC(JsonRpcPeer):
    def __init__(self, routes: Mapping[str, Route]) -> None:
        failpoints = frozenset(filter(None, os.environ.get("TETHER_FAILPOINTS", "").split(",")))
        options = PeerOptions(
            id_prefix="tether-",
            cancel_style="lsp",
            failpoints=failpoints,
            structure=_structure,
            log_name="the daemon log",
        )
        super().__init__(routes, options=options)

    @property
    def acp_peer(self) -> bool:
        """True once an ACP client initialized: our cancels then use ACP's spelling."""
        return self.options.cancel_style == "acp"

    @acp_peer.setter
    def acp_peer(self, value: bool) -> None:
        self.options.cancel_style = "acp" if value else "lsp"

    async def send_request_async(self, method: str, params: Any = None) -> Any:
        """Ask the client something and wait for its answer (see `request`)."""
        return await self.request(method, params)
