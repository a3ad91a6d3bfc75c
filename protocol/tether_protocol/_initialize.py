"""`initialize` (ACP's and LSP's in one), the capabilities on both sides, and request
cancellation (`$/cancel_request`, `$/cancelRequest`).

Owns: those shapes, exactly as sent today (SPEC §2, §3.1, §3.14): a pure ACP client
gets the LSP half of the result under `_meta.tether.lsp`, an LSP client at the root.
Must not: be imported by the daemon's fast start (it answers `initialize` with the
stdlib-only `handshake.py`); these classes describe that answer, they do not build it.
"""

from __future__ import annotations

from typing import Union

import attrs

from ._common import Implementation
from ._fields import Meta, wire
from ._json import JsonObject

__all__ = [
    "AgentCapabilities", "CancelRequestParams", "ClientCapabilities", "ClientCapabilitiesMeta",
    "ClientTetherCapabilities", "CodeActionOptions",
    "ExecuteCommandOptions", "FileSystemCapabilities", "InitializeParams", "InitializeResult",
    "InitializeResultMeta", "InitializeTetherMeta", "LspInitializeResult",
    "McpCapabilities", "PromptCapabilities", "RefusedSetting", "ServerCapabilities",
    "SessionCapabilities", "TextDocumentSyncOptions", "WorkspaceFolder",
]


@attrs.define
class FileSystemCapabilities:
    read_text_file: bool = False
    write_text_file: bool = False


@attrs.define
class ClientTetherCapabilities:
    """`namedPermissionOptions: true`: the client shows permission options by name, so it
    is offered "Allow once, with network", a second option of kind `allow_once` (SPEC §3.22).
    `clearSession: true`: `/clear` opens a new session and tells the client by
    `_tether/session/cleared`, for it to show in the same view (SPEC §4.11)."""

    named_permission_options: bool = False
    clear_session: bool = False


@attrs.define
class ClientCapabilitiesMeta:
    """`terminal_output: true` asks for command output as terminal `_meta` (SPEC §4.9)."""

    terminal_output: Union[bool, None] = wire("terminal_output", default=None)
    tether: Union[ClientTetherCapabilities, None] = None


@attrs.define
class ClientCapabilities:
    """ACP's client capabilities, with Tether's extensions under `_meta`."""

    fs: FileSystemCapabilities = attrs.Factory(FileSystemCapabilities)
    terminal: bool = False
    meta: Union[ClientCapabilitiesMeta, None] = None


@attrs.define
class WorkspaceFolder:
    uri: str
    name: str


@attrs.define
class InitializeParams:
    """ACP's and LSP's initialize params in one: either set, or both, may arrive."""

    protocol_version: Union[int, None] = None
    client_capabilities: Union[ClientCapabilities, None] = None
    client_info: Union[Implementation, None] = None
    process_id: Union[int, None] = None
    root_uri: Union[str, None] = None
    root_path: Union[str, None] = None
    workspace_folders: Union[list[WorkspaceFolder], None] = None
    capabilities: Union[JsonObject, None] = None
    initialization_options: Union[JsonObject, None] = None
    meta: Meta = None


@attrs.define
class PromptCapabilities:
    image: bool = False
    audio: bool = False
    embedded_context: bool = True


@attrs.define
class McpCapabilities:
    http: bool = False
    sse: bool = False


@attrs.define
class SessionCapabilities:
    list: Union[JsonObject, None] = attrs.Factory(dict)
    resume: Union[JsonObject, None] = attrs.Factory(dict)
    close: Union[JsonObject, None] = attrs.Factory(dict)
    delete: Union[JsonObject, None] = attrs.Factory(dict)


@attrs.define
class AgentCapabilities:
    load_session: bool = True
    prompt_capabilities: PromptCapabilities = attrs.Factory(PromptCapabilities)
    mcp_capabilities: McpCapabilities = attrs.Factory(McpCapabilities)
    session_capabilities: SessionCapabilities = attrs.Factory(SessionCapabilities)


@attrs.define
class TextDocumentSyncOptions:
    """LSP: which document notifications Tether wants (`change: 2` is incremental)."""

    open_close: bool
    change: int
    save: bool


@attrs.define
class ExecuteCommandOptions:
    """The `tether.*` commands a stock LSP client may run (SPEC §3.33)."""

    commands: list[str]


@attrs.define
class CodeActionOptions:
    """The kinds of Tether's code actions (SPEC §3.34)."""

    code_action_kinds: list[str]


@attrs.define
class ServerCapabilities:
    """The LSP half's `capabilities`; `experimental.tether.protocolVersion` marks Tether."""

    text_document_sync: TextDocumentSyncOptions
    experimental: JsonObject
    execute_command_provider: Union[ExecuteCommandOptions, None] = None
    code_action_provider: Union[CodeActionOptions, None] = None


@attrs.define
class LspInitializeResult:
    """The LSP half of the `initialize` result."""

    capabilities: ServerCapabilities
    server_info: Implementation


@attrs.define
class RefusedSetting:
    """A workspace-config key Tether refused and ignored (SPEC §9)."""

    key: str
    file: str
    reason: str
    message: str


@attrs.define
class InitializeTetherMeta:
    lsp: Union[LspInitializeResult, None] = None
    config_refused: Union[list[RefusedSetting], None] = None
    # the ACP versions Tether speaks (v1 answer: a client may reconnect asking for 2)
    protocol_versions: Union[list[int], None] = None


@attrs.define
class InitializeResultMeta:
    tether: Union[InitializeTetherMeta, None] = None


@attrs.define
class InitializeResult:
    """The ACP half always; the LSP half (`capabilities`, `serverInfo`) at the root for a
    client that sent LSP params, else under `_meta.tether.lsp`."""

    protocol_version: int
    agent_capabilities: AgentCapabilities
    agent_info: Implementation
    auth_methods: list[JsonObject]
    capabilities: Union[ServerCapabilities, None] = None
    server_info: Union[Implementation, None] = None
    meta: Union[InitializeResultMeta, None] = None


@attrs.define
class CancelRequestParams:
    """`$/cancel_request` (ACP: `requestId`) and `$/cancelRequest` (LSP: `id`), both
    directions. Either key is accepted in either spelling (`requestId` wins); Tether
    sends `requestId` in ACP's spelling and `id` in LSP's."""

    id: Union[int, str, None] = None
    request_id: Union[int, str, None] = None
