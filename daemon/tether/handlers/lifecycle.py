"""`initialize`, `initialized`, `shutdown`, `exit`: LSP's lifecycle, which ACP clients skip.

Owns: their handlers (`EmptyParams` for the three LSP ones), and showing an LSP client the
refused workspace-config keys at `initialized`; nothing depends on the three arriving.
Must not: read the client's capabilities itself (`handshake.py` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether_protocol import InvalidRequest, JsonObject

from ..server.handshake import handshake

if TYPE_CHECKING:
    from msgspec import Struct

    from ..server.context import ClientConnection


async def initialize(ctx: ClientConnection, params: Any) -> Struct | JsonObject:
    if ctx.initialized:
        raise InvalidRequest("invalid request: initialize was already answered on this connection")
    result, profile, settings = handshake(params, ctx.settings, ctx.default_root)
    ctx.accept_client(profile, settings)
    ctx.connection.protocol_version = profile.wire_version
    return result


async def initialized(ctx: ClientConnection, _params: object) -> None:
    # LSP clients show window/showMessage; refused workspace-config keys must reach
    # the user, not only the log (ACP clients get them in the initialize answer).
    refused = ctx.settings.refused
    if refused and ctx.client is not None and ctx.client.lsp:
        text = "\n".join(item.message() for item in refused)
        ctx.rpc.notify("window/showMessage", {"type": 2, "message": f"Tether: {text}"})


async def shutdown(ctx: ClientConnection, _params: object) -> None:
    ctx.shutdown_requested = True
    await ctx.stop_turns()
    ctx.rpc.shutting_down = True  # LSP: later requests get -32600; `exit` still works


async def exit_(ctx: ClientConnection, _params: object) -> None:
    # LSP: exit code 0 after a shutdown request, 1 without one.
    ctx.stop(0 if ctx.shutdown_requested else 1)
