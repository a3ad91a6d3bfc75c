"""The daemon's end of the JSON-RPC peer.

Owns: the daemon's choices on `tether_protocol.peer.JsonRpcPeer`: `tether-N` ids, cancels
spelled as the client's protocol spells them, bugs reported as "details in the daemon
log", and test failpoints (`TETHER_FAILPOINTS`).
Must not: know session or agent semantics; handlers live in `tether.server`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TypeVar

from tether_protocol.peer import (
    JsonRpcPeer,
    PeerOptions,
    RawResult,
    RequestFailed,
    Route,
    current_request_id,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from tether_protocol import TetherError

__all__ = ["ClientRequestFailed", "RawResult", "Route", "TetherRPC", "current_request_id", "unless_window_left"]

# The client answered one of our requests with an error.
ClientRequestFailed = RequestFailed

_T = TypeVar("_T")


async def unless_window_left(asking: Awaitable[_T]) -> _T | None:
    """The client's answer, or None when its window went away before answering (the peer
    fails such a request with ConnectionError, whether the client closed or we did)."""
    try:
        return await asking
    except ConnectionError:
        return None


class TetherRPC(JsonRpcPeer):
    def __init__(
        self,
        routes: Mapping[str, Route],
        known_failure: Callable[[str, Exception], TetherError | None] | None = None,
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
