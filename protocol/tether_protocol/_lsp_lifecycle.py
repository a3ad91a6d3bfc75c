"""LSP's `initialize` and `$/cancelRequest`: the daemon also speaks LSP (SPEC §2, §3.1, §3.14).

Owns: LSP's initialize params (the keys and the part of its capabilities Tether reads), LSP's
half of the answer and `$/cancelRequest`'s params, declared by hand (LSP is not ACP; ACP's are
generated, `acp_v1/initialize.py`). Must not: read them (`server/handshake.py` does) or pull in
more than `_codec` and `_common` (the start path).
"""

from __future__ import annotations

from typing import Annotated

from msgspec import UNSET, UnsetType

from ._codec import Described, Wire
from ._common import Implementation
from ._json import JsonObject

__all__ = [
    "CodeActionOptions",
    "ExecuteCommandOptions",
    "LspCancelParams",
    "LspClientCapabilities",
    "LspInitializeParams",
    "LspInitializeResult",
    "ServerCapabilities",
    "TextDocumentSyncOptions",
    "WorkspaceFolder",
]


class WorkspaceFolder(Wire):
    uri: str
    name: str


# ---- the part of LSP's client capabilities Tether reads (private: the schema keeps LSP's
# `capabilities` an open object, as LSP has far more of them) ------------------------------


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


class LspClientCapabilities(Wire):
    """What Tether reads of an LSP client's `capabilities` (LSP's other keys are left alone)."""

    workspace: _LspWorkspaceCapabilities | None = None
    window: _LspWindowCapabilities | None = None


class LspInitializeParams(Wire):
    """LSP's `initialize` params, the keys Tether reads: present at all (even null),
    `capabilities`, `processId` or `rootUri` mark an LSP client (UNSET while absent)."""

    # ACP v2's `capabilities` shares the key: its LSP keys are read here, its ACP ones by ACP's class
    capabilities: Annotated[LspClientCapabilities | UnsetType | None, Described(JsonObject | None)] = UNSET
    workspace_folders: list[WorkspaceFolder] | None = None
    root_uri: str | UnsetType | None = UNSET
    root_path: str | None = None
    process_id: int | UnsetType | None = UNSET
    initialization_options: JsonObject | None = None


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


class LspCancelParams(Wire):
    """`$/cancelRequest` (LSP), both directions: the request's `id` (the peer also reads
    ACP's `requestId` here, which wins)."""

    id: int | str
