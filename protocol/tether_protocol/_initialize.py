"""`initialize` and request cancellation, as ACP and LSP clients send them (SPEC §2, §3.1, §3.14).

Owns: naming them for Tether (ACP's generated, `acp_v1/initialize.py` and `lifecycle.py`; LSP's
hand-declared, `_lsp_lifecycle`; Tether's `_meta`: `_capabilities_meta`, `_extensions`), the
schema's classes (ACP's joined with LSP's fields) and `read_initialize` (through the halves).
Must not: build the answer (`server/handshake.py` does) or declare a field of either half again.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import msgspec

from ._capabilities_meta import (
    ClientCapabilitiesMeta,
    ClientTetherCapabilities,
    InitializeResultMeta,
    InitializeTetherMeta,
    RefusedSetting,
)
from ._codec import Wire, convert
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
    "read_initialize",
]


def _kind(key: str) -> str:
    return f"invalid params for initialize: {key} must be an object"


# A mistake's words (`_codec.convert`), the hand-written reader's, on the whole `initialize`: a
# value of the wrong kind (a mistake inside one is worded by its path), in the order it checked them
_KIND_ERRORS = {
    key: _kind(key) for key in ("clientCapabilities", "clientInfo", "info", "capabilities", "initializationOptions")
}
_WIRE_ERRORS = {
    "protocolVersion": "invalid params for initialize: protocolVersion must be an integer",
    "workspaceFolders": "invalid params for initialize: workspaceFolders must be a list of {uri, name}",
    "rootUri": "invalid params for initialize: rootUri must be a string",
}


def read_initialize(params: JsonObject) -> tuple[AcpInitializeParams, LspInitializeParams]:
    """Both halves of `initialize`'s params (a key of neither is left alone): an ACP-only
    client's LSP half is empty, and the other way round. A mistake is worded by the whole
    (`InitializeParams`), so mistakes in both halves are named together, ACP's keys first."""
    try:
        return msgspec.convert(params, AcpInitializeParams), msgspec.convert(params, LspInitializeParams)
    except msgspec.ValidationError:
        convert(params, _join("InitializeParams"), method="initialize")  # raises: a half's keys are the whole's
        raise AssertionError("an initialize half refused what the whole accepts") from None


def _joined(name: str, acp: type[msgspec.Struct], lsp: type[msgspec.Struct], doc: str) -> Any:
    """ACP's class with LSP's fields added, each optional (copied, so declared once). The
    answer's `_meta` stays last (after LSP's keys: the order the handshake writes)."""
    words = {"KIND_ERRORS": _KIND_ERRORS, "WIRE_ERRORS": _WIRE_ERRORS} if name == "InitializeParams" else {}
    extra = [_copied(field, optional=True) for field in msgspec.structs.fields(lsp)]
    namespace = {"__doc__": doc, **words}
    if name != "InitializeResult":
        return msgspec.defstruct(name, extra, bases=(acp,), module=__name__, namespace=namespace)
    own = [_copied(field, optional=False) for field in msgspec.structs.fields(acp)]
    fields = [f for f in own if f[0] != "meta"] + extra + [f for f in own if f[0] == "meta"]
    return msgspec.defstruct(name, fields, bases=(Wire,), kw_only=True, module=__name__, namespace=namespace)


def _copied(field: msgspec.structs.FieldInfo, *, optional: bool) -> tuple[str, Any, Any]:
    """A field for `defstruct`, under its wire name; ``optional``: None while absent."""
    if field.default_factory is not msgspec.NODEFAULT:
        return field.name, field.type, msgspec.field(default_factory=field.default_factory, name=field.encode_name)
    if field.required and not optional:
        return field.name, field.type, msgspec.field(name=field.encode_name)
    wire = msgspec.field(default=None if field.required else field.default, name=field.encode_name)
    return field.name, field.type | None if field.required else field.type, wire


# The wire's `initialize` and cancel, as the schema and the method table name them: ACP's and
# LSP's in one object (either set, or both: Tether's VS Code extension, v2's `capabilities`
# beside LSP's), each key once; the answer is ACP's with LSP's half at the root for a client
# that sent LSP's params. Joined from the two shapes, not declared again, on first use (the
# schema's, a mistake's words: a join costs ~0.2 ms, the start path reads through the halves).
# mypy sees ACP's class: the daemon reads `initialize` raw, the peer reads cancels raw.
_JOINS: dict[str, tuple[str, type[msgspec.Struct], str]] = {  # the ACP class (in `acp_v1`), LSP's, the doc
    "InitializeParams": (
        "initialize.AcpInitializeParams",
        LspInitializeParams,
        "ACP's and LSP's initialize params in one: either set, or both, may arrive. ACP v2 names the client"
        " `info` and its capabilities `capabilities` (LSP's key in v1).",
    ),
    "InitializeResult": (
        "initialize.AcpInitializeResult",
        LspInitializeResult,
        "The ACP half always; the LSP half (`capabilities`, `serverInfo`) at the root for a client that"
        " sent LSP params, else under `_meta.tether.lsp`.",
    ),
    "CancelRequestParams": (
        "lifecycle.AcpCancelRequestParams",
        LspCancelParams,
        "`$/cancel_request` (ACP: `requestId`) and `$/cancelRequest` (LSP: `id`), both directions. Either key"
        " is accepted in either spelling (`requestId` wins); Tether sends `requestId` in ACP's spelling and"
        " `id` in LSP's.",
    ),
}

if TYPE_CHECKING:
    from ._json import JsonObject
    from .acp_v1.content import Implementation
    from .acp_v1.lifecycle import AcpCancelRequestParams

    InitializeParams = AcpInitializeParams

    class InitializeResult(AcpInitializeResult, kw_only=True):  # the join as mypy sees it
        capabilities: ServerCapabilities | None = None
        server_info: Implementation | None = None

    CancelRequestParams = AcpCancelRequestParams
else:

    def __getattr__(name: str) -> Any:
        if name not in _JOINS:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return _join(name)


def _join(name: str) -> Any:
    """The wire class ``name``, joined on first use (kept: later lookups skip `__getattr__`)."""
    joined = globals().get(name)
    if joined is None:
        acp, lsp, doc = _JOINS[name]
        area, acp_name = acp.split(".")
        acp_class = getattr(importlib.import_module(f"{__package__}.acp_v1.{area}"), acp_name)
        joined = globals()[name] = _joined(name, acp_class, lsp, doc)
    return joined
