"""`initialize` (ACP's and LSP's in one), both sides' capabilities, and request cancellation.

Owns: those shapes as sent (SPEC §2, §3.1, §3.14; a pure ACP client gets LSP's half under
`_meta.tether.lsp`), the params' own words and the part of LSP's client capabilities Tether reads;
ACP's capabilities are generated (`acp_v1/initialize.py`), their `_meta` is `_capabilities_meta`'s.
Must not: build the answer (`server/handshake.py` does) or pull in more than `_common`.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec
from msgspec import UNSET, UnsetType

from ._capabilities_meta import ClientCapabilitiesMeta, ClientTetherCapabilities
from ._codec import Described, Meta, Wire
from ._common import Implementation
from ._json import JsonObject
from .acp_v1.initialize import (
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


class WorkspaceFolder(Wire):
    uri: str
    name: str


# ---- the part of LSP's client capabilities Tether reads (private: the schema keeps LSP's
# `capabilities` an open object, as LSP has far more of them; `server/handshake.py` reads
# these) ---------------------------------------------------------------------------------


class _LspShowDocumentCapabilities(Wire):
    support: bool = False


class _LspWindowCapabilities(Wire):
    """`showMessage` (an object) marks `window/showMessageRequest`'s support."""

    show_message: JsonObject | None = None
    work_done_progress: bool | None = None
    show_document: _LspShowDocumentCapabilities | None = None


class _LspWorkspaceEditCapabilities(Wire):
    resource_operations: list[str] | None = None


class _LspWorkspaceCapabilities(Wire):
    apply_edit: bool | None = None
    workspace_edit: _LspWorkspaceEditCapabilities | None = None


class _LspClientCapabilities(Wire):
    """What Tether reads of an LSP client's `capabilities` (LSP's other keys are left alone)."""

    workspace: _LspWorkspaceCapabilities | None = None
    window: _LspWindowCapabilities | None = None


def _kind(key: str) -> str:
    return f"invalid params for initialize: {key} must be an object"


class InitializeParams(Wire):
    """ACP's and LSP's initialize params in one: either set, or both, may arrive. ACP v2
    names the client `info` and its capabilities `capabilities` (LSP's key in v1)."""

    # a value of the wrong kind: the hand-written reader's words (a mistake inside one is
    # worded by its path); declared in the order it checked them
    KIND_ERRORS: ClassVar[dict[str, str]] = {
        key: _kind(key) for key in ("clientCapabilities", "clientInfo", "info", "capabilities", "initializationOptions")
    }
    WIRE_ERRORS: ClassVar[dict[str, str]] = {
        "protocolVersion": "invalid params for initialize: protocolVersion must be an integer",
        "workspaceFolders": "invalid params for initialize: workspaceFolders must be a list of {uri, name}",
        "rootUri": "invalid params for initialize: rootUri must be a string",
    }

    protocol_version: int | None = None
    client_capabilities: ClientCapabilities | None = None
    client_info: Implementation | None = None
    info: Implementation | None = None
    # LSP's (what Tether reads of them; v2's are read as `ClientCapabilities`); present at
    # all, even null, marks an LSP client: UNSET while absent
    capabilities: Annotated[_LspClientCapabilities | UnsetType | None, Described(JsonObject | None)] = UNSET
    workspace_folders: list[WorkspaceFolder] | None = None
    root_uri: str | UnsetType | None = UNSET
    root_path: str | None = None
    process_id: int | UnsetType | None = UNSET
    initialization_options: JsonObject | None = None
    meta: Meta = msgspec.field(default=None, name="_meta")


class TextDocumentSyncOptions(Wire):
    """LSP: which document notifications Tether wants (`change: 2` is incremental)."""

    open_close: bool
    change: int
    save: bool


class ExecuteCommandOptions(Wire):
    """The `tether.*` commands a stock LSP client may run (SPEC §3.33)."""

    commands: list[str]


class CodeActionOptions(Wire):
    """The kinds of Tether's code actions (SPEC §3.34)."""

    code_action_kinds: list[str]


class ServerCapabilities(Wire):
    """The LSP half's `capabilities`; `experimental.tether.protocolVersion` marks Tether."""

    text_document_sync: TextDocumentSyncOptions
    experimental: JsonObject
    execute_command_provider: ExecuteCommandOptions | None = None
    code_action_provider: CodeActionOptions | None = None


class LspInitializeResult(Wire):
    """The LSP half of the `initialize` result."""

    capabilities: ServerCapabilities
    server_info: Implementation


class RefusedSetting(Wire):
    """A workspace-config key Tether refused and ignored (SPEC §9)."""

    key: str
    file: str
    reason: str
    message: str


class InitializeTetherMeta(Wire):
    lsp: LspInitializeResult | None = None
    config_refused: list[RefusedSetting] | None = None
    # the ACP versions Tether speaks (v1 answer: a client may reconnect asking for 2)
    protocol_versions: list[int] | None = None


class InitializeResultMeta(Wire):
    tether: InitializeTetherMeta | None = None


class InitializeResult(Wire):
    """The ACP half always; the LSP half (`capabilities`, `serverInfo`) at the root for a
    client that sent LSP params, else under `_meta.tether.lsp`."""

    protocol_version: int
    agent_capabilities: AgentCapabilities
    agent_info: Implementation
    auth_methods: list[JsonObject]
    capabilities: ServerCapabilities | None = None
    server_info: Implementation | None = None
    meta: InitializeResultMeta | None = msgspec.field(default=None, name="_meta")


class CancelRequestParams(Wire):
    """`$/cancel_request` (ACP: `requestId`) and `$/cancelRequest` (LSP: `id`), both
    directions. Either key is accepted in either spelling (`requestId` wins); Tether
    sends `requestId` in ACP's spelling and `id` in LSP's."""

    id: int | str | None = None
    request_id: int | str | None = None
