"""Reading `initialize`'s params: ACP's half through the generated ACP shape, LSP's through LSP's.

Owns: `read_initialize` and the `-32602` words of a mistake, as the hand-written reader worded
them: the wire's whole `initialize` (`_initialize`'s join of the halves) words it, so mistakes
in both halves are named together, in its key order. Must not: build the answer or read the
capabilities (`server/handshake.py` does), or pull in more than `_initialize` (the start path).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, ClassVar

import msgspec

from ._codec import convert
from ._lsp_lifecycle import LspInitializeParams
from .acp_v1.initialize import AcpInitializeParams

if TYPE_CHECKING:
    from ._json import JsonObject

__all__ = ["read_initialize"]


def _kind(key: str) -> str:
    return f"invalid params for initialize: {key} must be an object"


@functools.cache
def _words() -> type:
    """The wire's whole `initialize` (built on a first mistake: the start path never needs it)
    with the hand-written reader's words for a value of the wrong kind (a mistake inside one is
    worded by its path), in the order it checked them."""
    from ._initialize import InitializeParams

    class InitializeWords(InitializeParams):
        KIND_ERRORS: ClassVar[dict[str, str]] = {
            key: _kind(key)
            for key in ("clientCapabilities", "clientInfo", "info", "capabilities", "initializationOptions")
        }
        WIRE_ERRORS: ClassVar[dict[str, str]] = {
            "protocolVersion": "invalid params for initialize: protocolVersion must be an integer",
            "workspaceFolders": "invalid params for initialize: workspaceFolders must be a list of {uri, name}",
            "rootUri": "invalid params for initialize: rootUri must be a string",
        }

    return InitializeWords


def read_initialize(params: JsonObject) -> tuple[AcpInitializeParams, LspInitializeParams]:
    """Both halves of `initialize`'s params (a key of neither is left alone): an ACP-only
    client's LSP half is empty, and the other way round. `InvalidParams` names each mistake."""
    try:
        return msgspec.convert(params, AcpInitializeParams), msgspec.convert(params, LspInitializeParams)
    except msgspec.ValidationError:
        convert(params, _words(), method="initialize")  # raises: the halves' keys are the whole's
        raise AssertionError("an initialize half refused what the whole accepts") from None
