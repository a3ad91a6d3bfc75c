"""Reading `initialize`'s params: ACP's half through the generated ACP shape, LSP's through LSP's.

Owns: `read_initialize` and the `-32602` words of ACP's keys (LSP's are `_lsp_lifecycle`'s),
as the hand-written reader worded them. Must not: build the answer or read the capabilities
(`server/handshake.py` does), or pull in more than `_initialize` (the start path).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from ._codec import convert
from ._lsp_lifecycle import LspInitializeParams
from .acp_v1.initialize import AcpInitializeParams

if TYPE_CHECKING:
    from ._json import JsonObject

__all__ = ["read_initialize"]


def _kind(key: str) -> str:
    return f"invalid params for initialize: {key} must be an object"


class _AcpInitializeWords(AcpInitializeParams):
    """ACP's params with the hand-written reader's words for a value of the wrong kind (a
    mistake inside one is worded by its path), in the order it checked them."""

    KIND_ERRORS: ClassVar[dict[str, str]] = {key: _kind(key) for key in ("clientCapabilities", "clientInfo", "info")}
    WIRE_ERRORS: ClassVar[dict[str, str]] = {
        "protocolVersion": "invalid params for initialize: protocolVersion must be an integer",
    }


def read_initialize(params: JsonObject) -> tuple[AcpInitializeParams, LspInitializeParams]:
    """Both halves of `initialize`'s params, ACP's first (its keys were checked first); a key
    of neither is left alone. An ACP-only client's LSP half is empty, and the other way round."""
    return (
        convert(params, _AcpInitializeWords, method="initialize"),
        convert(params, LspInitializeParams, method="initialize"),
    )
