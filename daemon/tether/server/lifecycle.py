"""`initialize`, `initialized`, `shutdown`, `exit`: LSP's lifecycle, which ACP clients skip.

Nothing depends on `initialized`/`shutdown`/`exit` arriving: ACP clients never send
them; stdin closing ends the daemon just as cleanly. `initialized` is when an LSP client
is shown the workspace-config keys Tether refused (`window/showMessage`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether_protocol._errors import InvalidRequest

from ..transport.rpc import Route
from .handshake import handshake

if TYPE_CHECKING:
    from .app import TetherServer


def routes(server: TetherServer) -> list[Route]:
    async def initialize(params: Any) -> dict[str, Any]:
        if server.initialized:
            raise InvalidRequest("invalid request: initialize was already answered on this connection")
        result, profile, settings = handshake(params, server.settings, server.default_root)
        server.accept_client(profile, settings)
        return result

    async def initialized(_params: Any) -> None:
        # LSP clients show window/showMessage; refused workspace-config keys must reach
        # the user, not only the log (ACP clients get them in the initialize answer).
        refused = server.settings.refused
        if refused and server.client is not None and server.client.lsp:
            text = "\n".join(item.message() for item in refused)
            server.rpc.notify("window/showMessage", {"type": 2, "message": f"Tether: {text}"})
        return None

    async def shutdown(_params: Any) -> None:
        server.shutdown_requested = True
        await server.stop_turns()
        server.rpc.shutting_down = True  # LSP: later requests get -32600; `exit` still works
        return None

    async def exit_(_params: Any) -> None:
        # LSP: exit code 0 after a shutdown request, 1 without one.
        server.stop(0 if server.shutdown_requested else 1)

    return [
        Route("initialize", initialize, None),
        Route("initialized", initialized, None, notification=True),
        Route("shutdown", shutdown, None),
        Route("exit", exit_, None, notification=True),
    ]
