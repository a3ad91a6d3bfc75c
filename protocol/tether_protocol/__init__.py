"""tether_protocol: the wire contract shared by the Tether daemon and the Python client.

Owns: the package's names (error codes and exceptions, framing, the typed ACP v1 messages,
`structure`/`unstructure`, `build_schema()`); `peer`, `conversation` and `acp_v2` sit beside them.
Must not: import more than the error, JSON and framing modules up front: the rest loads on
first use of a name (PEP 562), so the daemon's start stays fast (docs/decisions/0017).
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

if _typing.TYPE_CHECKING:
    from ._codec import Meta
    from ._converter import structure, unstructure
    from ._messages import *  # noqa: F403
    from ._methods import NULL_RESULT, Direction, Kind, Method
    from ._schema import build_schema

PROTOCOL_VERSION = 1
"""The ACP protocol version the daemon speaks (`protocolVersion` in `initialize`)."""

# Every message class, union and enumeration (`_messages.__all__`), served lazily.
_MESSAGE_NAMES = """
    AGENT_NOTIFICATIONS AGENT_REQUESTS AcceptedHunksMeta AgentCapabilities AllowAlwaysRule AllowAlwaysScope
    AgentMessageChunk AgentThoughtChunk ApplyWorkspaceEditParams AvailableCommand
    AvailableCommandInput AvailableCommandsUpdate
    ApplyWorkspaceEditResult CLIENT_NOTIFICATIONS CLIENT_REQUESTS
    CancelRequestParams CancelledOutcome ClientCapabilities ClientCapabilitiesMeta
    ClientTetherCapabilities Compaction ConfigOptionUpdate ContentBlock
    CreateFile CreateFileOptions CurrentModeUpdate DaemonStats
    DidChangeTextDocumentParams DidCloseTextDocumentParams DidOpenTextDocumentParams
    DidSaveTextDocumentParams DiffContent DumpParams DumpResult DumpedFile EmbeddedResource EmptyParams
    EmptyResult FileSystemCapabilities ForkSessionParams Hunk Implementation
    InitializeParams InitializeResult InitializeResultMeta InitializeTetherMeta
    LatestParams LatestResult LatestSession ListSessionsParams ListSessionsResult
    LoadSessionParams LoadSessionResult LspInitializeResult METHODS
    McpCapabilities MemoryHit MemoryRecall MessageActionItem MessageRole MessageStatus ModeId
    NewSessionParams NewSessionResult NoLatestSession
    OptionalVersionedTextDocumentIdentifier PendingApprovals PendingCall
    PermissionOption PermissionOptionKind PermissionRequestMeta PermissionResultMeta
    PermissionTetherMeta PermissionToolCall Plan PlanEntry PlanEntryPriority
    PlanEntryStatus Position PromptCapabilities PromptParams PromptResult
    PromptResultMeta PromptTetherMeta Range ReadTextFileParams ReadTextFileResult
    RefusedSetting RemoveRuleParams ReportParams ReportResult
    RequestPermissionOutcome RequestPermissionParams RequestPermissionResult
    ResourceLink RestoreParams RestoreResult RestoredRule ResumeSessionParams
    ResumeSessionResult Rule RuleDecision RuleKind RulesParams RulesResult RunReport
    SearchHit SearchParams SearchResult SelectedOutcome ServerCapabilities
    SessionCapabilities SessionIdParams SessionInfo SessionInfoUpdate SessionMode
    SessionModeState SessionNotification SessionUpdate SetModeParams
    ShowMessageParams ShowMessageRequestParams ShowMessageRequestResult Snapshot
    SnapshotMessage SnapshotPending SnapshotReport SnapshotRule SnapshotSession
    SnapshotTurn StepReport StopReason StoredMessageStatus TerminalCancelParams TerminalContent
    TerminalExit TerminalInfo TerminalOutput TetherForkParams TextContent
    TextDocumentContentChangeEvent TextDocumentEdit TextDocumentIdentifier
    TextDocumentItem TextDocumentSyncOptions TextEdit TextResource ToolCall
    ToolCallCancelParams ToolCallContent ToolCallContentBlock ToolCallLocation ToolCallReport
    ToolCallStatus ToolCallUpdate ToolKind TurnEnded TurnStatus TurnStopReason
    UpdateMeta UpdateTetherMeta Usage UsageUpdate UserMessageChunk V1 WorkspaceEdit
    WorkspaceFolder WriteTextFileParams WriteTextFileResult
    CodeAction CodeActionContext CodeActionOptions CodeActionParams CodeActionResult
    Command CommandResult Diagnostic ExecuteCommandOptions ExecuteCommandParams
    LogMessageParams ProgressParams ProgressValue ShowDocumentParams ShowDocumentResult
    WorkDoneProgressBegin WorkDoneProgressCancelParams WorkDoneProgressCreateParams WorkDoneProgressEnd
    WorkDoneProgressReport
    SessionConfigOption SessionConfigSelectOption SetConfigOptionParams SetConfigOptionResult
    SetModelParams SessionClearedParams
    ChangedFile ChangesParams ChangesResult RewindConflict RewindInfo RewindParams RewindResult RewindSkipped
    RewindRestore
    DequeueParams QueueParams QueueResult QueueState QueuedPrompt SteerOutcome SteerParams
""".split()
# Names served lazily, and the private module each one lives in.
_LAZY_MODULES: dict[str, tuple[str, ...]] = {
    "_converter": ("structure", "unstructure"),
    "_codec": ("Meta",),
    "_schema": ("build_schema",),
    "_methods": ("Direction", "Kind", "Method", "NULL_RESULT"),
    "_messages": tuple(_MESSAGE_NAMES),
}
_LAZY: dict[str, str] = {
    name: module for module, names in _LAZY_MODULES.items() for name in names
}


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
    "ConfigInvalid", "DEFAULT_MAX_MESSAGE", "Direction", "ERROR_CLASSES", "FrameTooLarge", "Framing", "FramingError",
    "InternalError", "InvalidParams", "InvalidRequest", "Kind", "LspFrameDecoder",
    "Meta", "Method", "MethodNotFound", "NULL_RESULT", "NdjsonDecoder",
    "NoProviderConfigured", "PROTOCOL_VERSION", "ParseError", "ProviderFailed",
    "RequestCancelled", "SessionBusy", "SessionNotFound", "StorageFailed",
    "TetherError", "WorkspaceInvalid", "build_schema", "decoder_for", "detect_framing",
    "encode_lsp", "encode_ndjson", "encoder_for", "structure", "unstructure",
]
__all__ += _MESSAGE_NAMES  # the message classes (`_messages.__all__`)
__all__.sort()
