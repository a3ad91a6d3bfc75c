"""tether_protocol: the wire contract shared by the Tether daemon and the Python client.

Owns: the package's one public face (`__all__`): error codes and exceptions, framing, the JSON codec
(`dumps`/`loads`, `convert`, `structure`/`unstructure`), the typed ACP v1 messages, `build_schema()`;
`peer`, `conversation`, `schema` and `acp_v2` sit beside it. Must not: import more than the error, JSON
and framing modules up front: the rest loads on first use of a name (PEP 562), so the start stays fast.
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

from ._errors import (
    ERROR_CLASSES,
    ConfigInvalid,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    NoProviderConfigured,
    ParseError,
    ProviderFailed,
    RequestCancelled,
    SessionBusy,
    SessionNotFound,
    StorageFailed,
    TetherError,
    WorkspaceInvalid,
)
from ._framing import (
    DEFAULT_MAX_MESSAGE,
    FrameTooLarge,
    Framing,
    FramingError,
    LspFrameDecoder,
    NdjsonDecoder,
    decoder_for,
    detect_framing,
    encode_lsp,
    encode_ndjson,
    encoder_for,
)
from ._gc import collector_paused
from ._json import JsonObject, dumps, dumps_text, loads, type_name, whole_surrogates, whole_text

# For mypy, each message module by name: `_messages.__all__` is built at run time, which mypy
# cannot read, and a name it does not see here is `__getattr__`'s Any (tests/protocol checks)
if _typing.TYPE_CHECKING:
    from ._client_requests import *  # noqa: F403
    from ._codec import ENCODER, Described, Meta, convert, decode, explained
    from ._common import *  # noqa: F403
    from ._config_options import *  # noqa: F403
    from ._converter import structure, unstructure
    from ._extensions import *  # noqa: F403
    from ._initialize import *  # noqa: F403
    from ._lsp import *  # noqa: F403
    from ._lsp_lifecycle import LspCancelParams, LspClientCapabilities, LspInitializeParams
    from ._messages import *  # noqa: F403
    from ._methods import NULL_RESULT, Direction, Kind, Method
    from ._modes import *  # noqa: F403
    from ._pending import CheckpointError
    from ._prompt import *  # noqa: F403
    from ._prompt_blocks import conversation_blocks
    from ._queue import *  # noqa: F403
    from ._rewind import *  # noqa: F403
    from ._schema import build_schema
    from ._sessions import *  # noqa: F403
    from ._snapshots import *  # noqa: F403
    from ._stored_vocabulary import COMMAND_FOOTER
    from ._updates import *  # noqa: F403

PROTOCOL_VERSION = 1
"""The ACP protocol version the daemon speaks (`protocolVersion` in `initialize`)."""

# Served lazily, each from the private module that defines it: a name costs its own module only.
_LAZY_MODULES: dict[str, str] = {
    "_codec": "ENCODER Described Meta convert decode explained",
    "_converter": "structure unstructure",
    "_pending": "CheckpointError",
    "_schema": "build_schema",
    "_prompt_blocks": "conversation_blocks",
    "_methods": "Direction Kind Method NULL_RESULT",
    # LSP's halves the handshake reads through (not messages of the schema: `_initialize` joins them)
    "_lsp_lifecycle": "LspCancelParams LspClientCapabilities LspInitializeParams",
    "_stored_vocabulary": "COMMAND_FOOTER",  # (its message names: `_MESSAGE_MODULES`)
}
# Every message class, union and enumeration (`_messages.__all__`), by the module that defines it
# (not `_messages`, which imports them all: the start path imports only the few it uses).
_MESSAGE_MODULES: dict[str, str] = {
    "_common": """
        ContentBlock DiffContent EmbeddedResource Implementation PlanEntryPriority PlanEntryStatus
        ResourceLink StopReason TerminalContent TextContent TextResource ToolCallContent
        ToolCallContentBlock ToolCallLocation ToolCallStatus ToolKind
    """,
    "_modes": "ModeId SessionMode SessionModeState",
    "_prompt": "PromptParams PromptResult PromptResultMeta PromptTetherMeta",
    "_initialize": """
        AgentCapabilities CancelRequestParams ClientCapabilities FileSystemCapabilities InitializeParams
        InitializeResult McpCapabilities PromptCapabilities SessionCapabilities read_initialize
    """,
    "_capabilities_meta": """
        ClientCapabilitiesMeta ClientTetherCapabilities InitializeResultMeta InitializeTetherMeta RefusedSetting
    """,
    "_lsp_lifecycle": """
        CodeActionOptions ExecuteCommandOptions LspInitializeResult ServerCapabilities TextDocumentSyncOptions
        WorkspaceFolder
    """,
    "_sessions": """
        EmptyParams EmptyResult ForkSessionParams ListSessionsParams ListSessionsResult LoadSessionParams
        LoadSessionResult NewSessionParams NewSessionResult ResumeSessionParams ResumeSessionResult
        SessionIdParams SessionInfo SetModeParams TerminalCancelParams ToolCallCancelParams
    """,
    "_config_options": """
        SessionClearedParams SessionConfigOption SessionConfigSelectOption SetConfigOptionParams
        SetConfigOptionResult SetModelParams
    """,
    "_updates": """
        AgentMessageChunk AgentThoughtChunk AvailableCommand AvailableCommandInput AvailableCommandsUpdate
        Compaction ConfigOptionUpdate CurrentModeUpdate MemoryHit MemoryRecall MessageStatus Plan PlanEntry
        SessionInfoUpdate SessionNotification SessionUpdate TerminalExit TerminalInfo TerminalOutput
        ToolCall ToolCallUpdate TurnEnded TurnStopReason UpdateMeta UpdateTetherMeta UsageUpdate
        UserMessageChunk
    """,
    "_client_requests": """
        AcceptedHunksMeta AllowAlwaysRule AllowAlwaysScope CancelledOutcome Hunk PermissionOption
        PermissionOptionKind PermissionRequestMeta PermissionResultMeta PermissionTetherMeta
        PermissionToolCall ReadTextFileParams ReadTextFileResult RequestPermissionOutcome
        RequestPermissionParams RequestPermissionResult SelectedOutcome WriteTextFileParams
        WriteTextFileResult
    """,
    "_extensions": """
        DaemonStats RemoveRuleParams ReportParams ReportResult Rule RuleDecision RuleKind RulesParams RulesResult
        RunReport StepReport ToolCallReport Usage
    """,
    "_snapshots": """
        DumpParams DumpResult DumpedFile LatestParams LatestResult LatestSession NoLatestSession
        RestoreParams RestoreResult RestoredRule SearchHit SearchParams
        SearchResult Snapshot SnapshotMessage SnapshotPending SnapshotReport SnapshotRule SnapshotSession
        SnapshotTurn TetherForkParams
    """,
    "_lsp": """
        ApplyWorkspaceEditParams ApplyWorkspaceEditResult CodeAction CodeActionContext CodeActionParams
        CodeActionResult Command CommandResult CreateFile CreateFileOptions Diagnostic
        DidChangeTextDocumentParams DidCloseTextDocumentParams DidOpenTextDocumentParams
        DidSaveTextDocumentParams ExecuteCommandParams LogMessageParams MessageActionItem
        OptionalVersionedTextDocumentIdentifier Position ProgressParams ProgressValue Range
        ShowDocumentParams ShowDocumentResult ShowMessageParams ShowMessageRequestParams
        ShowMessageRequestResult TextDocumentContentChangeEvent TextDocumentEdit TextDocumentIdentifier
        TextDocumentItem TextEdit WorkDoneProgressBegin WorkDoneProgressCancelParams
        WorkDoneProgressCreateParams WorkDoneProgressEnd WorkDoneProgressReport WorkspaceEdit
    """,
    "_stored_vocabulary": "MessageRole StoredMessageStatus TurnStatus",
    "_pending": "PendingApprovals PendingCall",
    "_rewind": """
        ChangedFile ChangesParams ChangesResult RewindConflict RewindInfo RewindParams RewindRestore
        RewindResult RewindSkipped
    """,
    "_queue": "DequeueParams QueueParams QueueResult QueueState QueuedPrompt SteerOutcome SteerParams",
    "_methods": "AGENT_NOTIFICATIONS AGENT_REQUESTS CLIENT_NOTIFICATIONS CLIENT_REQUESTS METHODS V1",
}
_MESSAGE_NAMES = " ".join(_MESSAGE_MODULES.values()).split()
_LAZY: dict[str, str] = {}
for _module, _names in (*_LAZY_MODULES.items(), *_MESSAGE_MODULES.items()):
    _LAZY.update(dict.fromkeys(_names.split(), _module))  # (C loops: the package's import is on the start path)
del _module, _names


def __getattr__(name: str) -> _typing.Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(f".{module_name}", __name__), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "COMMAND_FOOTER",
    "DEFAULT_MAX_MESSAGE",
    "ENCODER",
    "ERROR_CLASSES",
    "NULL_RESULT",
    "PROTOCOL_VERSION",
    "CheckpointError",
    "ConfigInvalid",
    "Described",
    "Direction",
    "FrameTooLarge",
    "Framing",
    "FramingError",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "JsonObject",
    "Kind",
    "LspCancelParams",
    "LspClientCapabilities",
    "LspFrameDecoder",
    "LspInitializeParams",
    "Meta",
    "Method",
    "MethodNotFound",
    "NdjsonDecoder",
    "NoProviderConfigured",
    "ParseError",
    "ProviderFailed",
    "RequestCancelled",
    "SessionBusy",
    "SessionNotFound",
    "StorageFailed",
    "TetherError",
    "WorkspaceInvalid",
    "build_schema",
    "collector_paused",
    "conversation_blocks",
    "convert",
    "decode",
    "decoder_for",
    "detect_framing",
    "dumps",
    "dumps_text",
    "encode_lsp",
    "encode_ndjson",
    "encoder_for",
    "explained",
    "loads",
    "structure",
    "type_name",
    "unstructure",
    "whole_surrogates",
    "whole_text",
]
__all__ += _MESSAGE_NAMES  # the message classes (`_messages.__all__`)
__all__.sort()
