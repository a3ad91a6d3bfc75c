"""The daemon's end of the JSON-RPC peer.

Owns: the daemon's choices on `tether_protocol.peer.JsonRpcPeer`: `tether-N` ids, cancels
spelled as the client's protocol spells them, bugs reported as "details in the daemon
log", and test failpoints (`TETHER_FAILPOINTS`).
Must not: know session or agent semantics; handlers live in `tether.server`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from tether_protocol import TetherError
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


class TetherRPC(JsonRpcPeer):
    def __init__(
        self, routes: Mapping[str, Route], known_failure: Callable[[str, Exception], TetherError | None] | None = None,
    ) -> None:
        failpoints = frozenset(filter(None, os.environ.get("TETHER_FAILPOINTS", "").split(",")))
        options = PeerOptions(
            id_prefix="tether-",
            cancel_style="lsp",
            failpoints=failpoints,
            log_name="the daemon log",
            known_failure=known_failure,
        )
        super().__init__(routes, options=options)

    @property
    def acp_peer(self) -> bool:
        """True once an ACP client initialized: our cancels then use ACP's spelling."""
        return self.options.cancel_style == "acp"

    @acp_peer.setter
    def acp_peer(self, value: bool) -> None:
        self.options.cancel_style = "acp" if value else "lsp"
