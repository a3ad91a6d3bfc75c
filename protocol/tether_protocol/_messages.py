"""Every typed message of the Tether protocol, in one namespace.

Owns: nothing of its own — it re-exports the message modules (`_common`, `_initialize`,
`_sessions`, `_updates`, `_extensions`, `_snapshots`, `_lsp`, `_client_requests`) and the
method table (`_methods`: its tables, not the `Method` record), so `from tether_protocol._messages import PromptParams` and
`tether_protocol.PromptParams` name the same class. Must not: define a shape (each
lives in the module of its area, none over 400 lines).

Field names are snake_case in Python and camelCase on the wire (`meta` is `_meta`);
`_converter.py` renames and checks, `_schema.py` turns the classes into
`protocol/schema.json`.
"""

from __future__ import annotations

from ._client_requests import (
    AcceptedHunksMeta as AcceptedHunksMeta,
)
from ._client_requests import (
    CancelledOutcome as CancelledOutcome,
)
from ._client_requests import (
    Hunk as Hunk,
)
from ._client_requests import (
    PermissionOption as PermissionOption,
)
from ._client_requests import (
    PermissionOptionKind as PermissionOptionKind,
)
from ._client_requests import (
    PermissionRequestMeta as PermissionRequestMeta,
)
from ._client_requests import (
    PermissionResultMeta as PermissionResultMeta,
)
from ._client_requests import (
    PermissionTetherMeta as PermissionTetherMeta,
)
from ._client_requests import (
    PermissionToolCall as PermissionToolCall,
)
from ._client_requests import (
    ReadTextFileParams as ReadTextFileParams,
)
from ._client_requests import (
    ReadTextFileResult as ReadTextFileResult,
)
from ._client_requests import (
    RequestPermissionOutcome as RequestPermissionOutcome,
)
from ._client_requests import (
    RequestPermissionParams as RequestPermissionParams,
)
from ._client_requests import (
    RequestPermissionResult as RequestPermissionResult,
)
from ._client_requests import (
    SelectedOutcome as SelectedOutcome,
)
from ._client_requests import (
    WriteTextFileParams as WriteTextFileParams,
)
from ._client_requests import (
    WriteTextFileResult as WriteTextFileResult,
)
from ._common import (
    ContentBlock as ContentBlock,
)
from ._common import (
    DiffContent as DiffContent,
)
from ._common import (
    EmbeddedResource as EmbeddedResource,
)
from ._common import (
    Implementation as Implementation,
)
from ._common import (
    ModeId as ModeId,
)
from ._common import (
    PlanEntryPriority as PlanEntryPriority,
)
from ._common import (
    PlanEntryStatus as PlanEntryStatus,
)
from ._common import (
    ResourceLink as ResourceLink,
)
from ._common import (
    SessionMode as SessionMode,
)
from ._common import (
    SessionModeState as SessionModeState,
)
from ._common import (
    StopReason as StopReason,
)
from ._common import (
    TerminalContent as TerminalContent,
)
from ._common import (
    TextContent as TextContent,
)
from ._common import (
    TextResource as TextResource,
)
from ._common import (
    ToolCallContent as ToolCallContent,
)
from ._common import (
    ToolCallContentBlock as ToolCallContentBlock,
)
from ._common import (
    ToolCallLocation as ToolCallLocation,
)
from ._common import (
    ToolCallStatus as ToolCallStatus,
)
from ._common import (
    ToolKind as ToolKind,
)
from ._extensions import (
    DaemonStats as DaemonStats,
)
from ._extensions import (
    RemoveRuleParams as RemoveRuleParams,
)
from ._extensions import (
    ReportParams as ReportParams,
)
from ._extensions import (
    ReportResult as ReportResult,
)
from ._extensions import (
    Rule as Rule,
)
from ._extensions import (
    RuleDecision as RuleDecision,
)
from ._extensions import (
    RuleKind as RuleKind,
)
from ._extensions import (
    RulesParams as RulesParams,
)
from ._extensions import (
    RulesResult as RulesResult,
)
from ._extensions import (
    RunReport as RunReport,
)
from ._extensions import (
    StepReport as StepReport,
)
from ._extensions import (
    ToolCallReport as ToolCallReport,
)
from ._extensions import (
    Usage as Usage,
)
from ._initialize import (
    AgentCapabilities as AgentCapabilities,
)
from ._initialize import (
    CancelRequestParams as CancelRequestParams,
)
from ._initialize import (
    ClientCapabilities as ClientCapabilities,
)
from ._initialize import (
    FileSystemCapabilities as FileSystemCapabilities,
)
from ._initialize import (
    InitializeParams as InitializeParams,
)
from ._initialize import (
    InitializeResult as InitializeResult,
)
from ._initialize import (
    InitializeResultMeta as InitializeResultMeta,
)
from ._initialize import (
    InitializeTetherMeta as InitializeTetherMeta,
)
from ._initialize import (
    LspInitializeResult as LspInitializeResult,
)
from ._initialize import (
    McpCapabilities as McpCapabilities,
)
from ._initialize import (
    PromptCapabilities as PromptCapabilities,
)
from ._initialize import (
    RefusedSetting as RefusedSetting,
)
from ._initialize import (
    ServerCapabilities as ServerCapabilities,
)
from ._initialize import (
    SessionCapabilities as SessionCapabilities,
)
from ._initialize import (
    TextDocumentSyncOptions as TextDocumentSyncOptions,
)
from ._initialize import (
    WorkspaceFolder as WorkspaceFolder,
)
from ._lsp import (
    ApplyWorkspaceEditParams as ApplyWorkspaceEditParams,
)
from ._lsp import (
    ApplyWorkspaceEditResult as ApplyWorkspaceEditResult,
)
from ._lsp import (
    CreateFile as CreateFile,
)
from ._lsp import (
    CreateFileOptions as CreateFileOptions,
)
from ._lsp import (
    DidChangeTextDocumentParams as DidChangeTextDocumentParams,
)
from ._lsp import (
    DidCloseTextDocumentParams as DidCloseTextDocumentParams,
)
from ._lsp import (
    DidOpenTextDocumentParams as DidOpenTextDocumentParams,
)
from ._lsp import (
    DidSaveTextDocumentParams as DidSaveTextDocumentParams,
)
from ._lsp import (
    MessageActionItem as MessageActionItem,
)
from ._lsp import (
    OptionalVersionedTextDocumentIdentifier as OptionalVersionedTextDocumentIdentifier,
)
from ._lsp import (
    Position as Position,
)
from ._lsp import (
    Range as Range,
)
from ._lsp import (
    ShowMessageParams as ShowMessageParams,
)
from ._lsp import (
    ShowMessageRequestParams as ShowMessageRequestParams,
)
from ._lsp import (
    ShowMessageRequestResult as ShowMessageRequestResult,
)
from ._lsp import (
    TextDocumentContentChangeEvent as TextDocumentContentChangeEvent,
)
from ._lsp import (
    TextDocumentEdit as TextDocumentEdit,
)
from ._lsp import (
    TextDocumentIdentifier as TextDocumentIdentifier,
)
from ._lsp import (
    TextDocumentItem as TextDocumentItem,
)
from ._lsp import (
    TextEdit as TextEdit,
)
from ._lsp import (
    WorkspaceEdit as WorkspaceEdit,
)
from ._methods import (
    AGENT_NOTIFICATIONS as AGENT_NOTIFICATIONS,
)
from ._methods import (
    AGENT_REQUESTS as AGENT_REQUESTS,
)
from ._methods import (
    CLIENT_NOTIFICATIONS as CLIENT_NOTIFICATIONS,
)
from ._methods import (
    CLIENT_REQUESTS as CLIENT_REQUESTS,
)
from ._methods import (
    METHODS as METHODS,
)
from ._methods import (
    V1 as V1,
)
from ._methods import (
    EmptyParams as EmptyParams,
)
from ._sessions import (
    EmptyResult as EmptyResult,
)
from ._sessions import (
    ForkSessionParams as ForkSessionParams,
)
from ._sessions import (
    ListSessionsParams as ListSessionsParams,
)
from ._sessions import (
    ListSessionsResult as ListSessionsResult,
)
from ._sessions import (
    LoadSessionParams as LoadSessionParams,
)
from ._sessions import (
    LoadSessionResult as LoadSessionResult,
)
from ._sessions import (
    NewSessionParams as NewSessionParams,
)
from ._sessions import (
    NewSessionResult as NewSessionResult,
)
from ._sessions import (
    PromptParams as PromptParams,
)
from ._sessions import (
    PromptResult as PromptResult,
)
from ._sessions import (
    PromptResultMeta as PromptResultMeta,
)
from ._sessions import (
    PromptTetherMeta as PromptTetherMeta,
)
from ._sessions import (
    ResumeSessionParams as ResumeSessionParams,
)
from ._sessions import (
    ResumeSessionResult as ResumeSessionResult,
)
from ._sessions import (
    SessionIdParams as SessionIdParams,
)
from ._sessions import (
    SessionInfo as SessionInfo,
)
from ._sessions import (
    SetModeParams as SetModeParams,
)
from ._snapshots import (
    DumpParams as DumpParams,
)
from ._snapshots import (
    LatestParams as LatestParams,
)
from ._snapshots import (
    LatestResult as LatestResult,
)
from ._snapshots import (
    LatestSession as LatestSession,
)
from ._snapshots import (
    MessageRole as MessageRole,
)
from ._snapshots import (
    NoLatestSession as NoLatestSession,
)
from ._snapshots import (
    PendingApprovals as PendingApprovals,
)
from ._snapshots import (
    PendingCall as PendingCall,
)
from ._snapshots import (
    RestoredRule as RestoredRule,
)
from ._snapshots import (
    RestoreParams as RestoreParams,
)
from ._snapshots import (
    RestoreResult as RestoreResult,
)
from ._snapshots import (
    SearchHit as SearchHit,
)
from ._snapshots import (
    SearchParams as SearchParams,
)
from ._snapshots import (
    SearchResult as SearchResult,
)
from ._snapshots import (
    Snapshot as Snapshot,
)
from ._snapshots import (
    SnapshotMessage as SnapshotMessage,
)
from ._snapshots import (
    SnapshotPending as SnapshotPending,
)
from ._snapshots import (
    SnapshotReport as SnapshotReport,
)
from ._snapshots import (
    SnapshotRule as SnapshotRule,
)
from ._snapshots import (
    SnapshotSession as SnapshotSession,
)
from ._snapshots import (
    SnapshotTurn as SnapshotTurn,
)
from ._snapshots import (
    StoredMessageStatus as StoredMessageStatus,
)
from ._snapshots import (
    TetherForkParams as TetherForkParams,
)
from ._snapshots import (
    TurnStatus as TurnStatus,
)
from ._updates import (
    AgentMessageChunk as AgentMessageChunk,
)
from ._updates import (
    AgentThoughtChunk as AgentThoughtChunk,
)
from ._updates import (
    Compaction as Compaction,
)
from ._updates import (
    CurrentModeUpdate as CurrentModeUpdate,
)
from ._updates import (
    MessageStatus as MessageStatus,
)
from ._updates import (
    Plan as Plan,
)
from ._updates import (
    PlanEntry as PlanEntry,
)
from ._updates import (
    SessionInfoUpdate as SessionInfoUpdate,
)
from ._updates import (
    SessionNotification as SessionNotification,
)
from ._updates import (
    SessionUpdate as SessionUpdate,
)
from ._updates import (
    TerminalExit as TerminalExit,
)
from ._updates import (
    TerminalInfo as TerminalInfo,
)
from ._updates import (
    TerminalOutput as TerminalOutput,
)
from ._updates import (
    ToolCall as ToolCall,
)
from ._updates import (
    ToolCallUpdate as ToolCallUpdate,
)
from ._updates import (
    TurnEnded as TurnEnded,
)
from ._updates import (
    TurnStopReason as TurnStopReason,
)
from ._updates import (
    UpdateMeta as UpdateMeta,
)
from ._updates import (
    UpdateTetherMeta as UpdateTetherMeta,
)
from ._updates import (
    UsageUpdate as UsageUpdate,
)
from ._updates import (
    UserMessageChunk as UserMessageChunk,
)
