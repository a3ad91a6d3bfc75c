"""`initialize` and request cancellation, as ACP and LSP clients send them (SPEC §2, §3.1, §3.14).

Owns: naming them for Tether (ACP's are generated, `acp_v1/initialize.py`; LSP's hand-declared,
`_lsp_lifecycle`; Tether's `_meta` is `_capabilities_meta`'s) and the wire's classes the schema
names, each ACP's joined with LSP's fields (`_initialize_read` reads through the halves).
Must not: build the answer (`server/handshake.py` does) or declare a field of either half again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from ._capabilities_meta import (
    ClientCapabilitiesMeta,
    ClientTetherCapabilities,
    InitializeResultMeta,
    InitializeTetherMeta,
    RefusedSetting,
)
from ._lsp_lifecycle import (
    CodeActionOptions,
    ExecuteCommandOptions,
    LspCancelParams,
    LspInitializeParams,
    LspInitializeResult,
    ServerCapabilities,
    TextDocumentSyncOptions,
    WorkspaceFolder,
)
from .acp_v1.initialize import (
    AcpCancelRequestParams,
    AcpInitializeParams,
    AcpInitializeResult,
    AgentCapabilities,
    ClientCapabilities,
    FileSystemCapabilities,
    McpCapabilities,
    PromptCapabilities,
    SessionCapabilities,
)

__all__ = [
    "AgentCapabilities",
    "CancelRequestParams",
    "ClientCapabilities",
    "ClientCapabilitiesMeta",
    "ClientTetherCapabilities",
    "CodeActionOptions",
    "ExecuteCommandOptions",
    "FileSystemCapabilities",
    "InitializeParams",
    "InitializeResult",
    "InitializeResultMeta",
    "InitializeTetherMeta",
    "LspInitializeResult",
    "McpCapabilities",
    "PromptCapabilities",
    "RefusedSetting",
    "ServerCapabilities",
    "SessionCapabilities",
    "TextDocumentSyncOptions",
    "WorkspaceFolder",
]


def _joined(name: str, acp: type[msgspec.Struct], lsp: type[msgspec.Struct], doc: str) -> Any:
    """ACP's class with LSP's fields added, each optional (copied, so declared once)."""
    extra: list[tuple[str, Any, Any]] = []
    for field in msgspec.structs.fields(lsp):
        if field.default_factory is not msgspec.NODEFAULT:
            wire = msgspec.field(default_factory=field.default_factory, name=field.encode_name)
        else:  # a required one (NODEFAULT) becomes optional: None while absent
            wire = msgspec.field(default=None if field.required else field.default, name=field.encode_name)
        extra.append((field.name, field.type | None if field.required else field.type, wire))
    return msgspec.defstruct(name, extra, bases=(acp,), module=__name__, namespace={"__doc__": doc})


# The wire's `initialize` and cancel, as the schema and the method table name them: ACP's and
# LSP's in one object (either set, or both: Tether's VS Code extension, v2's `capabilities`
# beside LSP's), each key once; the answer is ACP's with LSP's half at the root for a client
# that sent LSP's params. Joined from the two shapes, not declared again, on first use (the
# schema's, a mistake's words: a join costs ~0.2 ms, the start path reads through the halves).
# mypy sees ACP's class: the daemon reads `initialize` raw, the peer reads cancels raw.
_JOINS = {
    "InitializeParams": (
        AcpInitializeParams,
        LspInitializeParams,
        "ACP's and LSP's initialize params in one: either set, or both, may arrive. ACP v2 names the client"
        " `info` and its capabilities `capabilities` (LSP's key in v1).",
    ),
    "InitializeResult": (
        AcpInitializeResult,
        LspInitializeResult,
        "The ACP half always; the LSP half (`capabilities`, `serverInfo`) at the root for a client that"
        " sent LSP params, else under `_meta.tether.lsp`.",
    ),
    "CancelRequestParams": (
        AcpCancelRequestParams,
        LspCancelParams,
        "`$/cancel_request` (ACP: `requestId`) and `$/cancelRequest` (LSP: `id`), both directions. Either key"
        " is accepted in either spelling (`requestId` wins); Tether sends `requestId` in ACP's spelling and"
        " `id` in LSP's.",
    ),
}

if TYPE_CHECKING:
    InitializeParams = AcpInitializeParams
    InitializeResult = AcpInitializeResult
    CancelRequestParams = AcpCancelRequestParams
else:

    def __getattr__(name: str) -> Any:
        if name not in _JOINS:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        acp, lsp, doc = _JOINS[name]
        joined = globals()[name] = _joined(name, acp, lsp, doc)  # later lookups skip __getattr__
        return joined
