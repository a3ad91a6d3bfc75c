"""Issue 32's codec spike: a slice of Tether's protocol model as msgspec Structs.

Owns: the msgspec twins of `tether_protocol`'s prompt, content blocks, `session/update`
(every v1 update kind and its `_meta`), stored conversation, snapshot and `initialize`
classes, spelled so the encoder writes what today's does (bench/codec_spike.py checks it).
Must not: be imported by Tether (a spike: nothing in daemon/ or protocol/ uses it).

How today's rules map: camelCase keys are `rename="camel"`; `meta` is `field(name="_meta")`;
a tagged union is `tag_field`/`tag` on each member (written first, as the hand-built update
dicts do); "left out while None" is `omit_defaults=True` where every default is None, and
`UNSET` where a class also has written defaults (msgspec's `omit_defaults` leaves out *any*
default: `ToolCall.kind == "other"` would vanish); snake_case stored formats drop `rename`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType, field

JsonObject = dict[str, Any]
MetaField = Union[JsonObject, None]


class Wire(Struct, rename="camel", omit_defaults=True):
    """The wire's base: camelCase keys, None-defaulted fields left out while None."""


class Stored(Struct, omit_defaults=True):
    """The store's and the snapshot's base: snake_case keys."""


# ---- enumerations (_common) ----------------------------------------------------------

StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]
ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"]
ToolCallStatus = Literal["pending", "in_progress", "completed", "failed"]
PlanEntryPriority = Literal["high", "medium", "low"]
PlanEntryStatus = Literal["pending", "in_progress", "completed"]
ModeId = Literal["read-only", "ask", "auto-edit", "full-auto"]
MessageStatus = Literal["cancelled", "incomplete", "interrupted", "error"]
TurnStopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"]


class Implementation(Wire):
    name: str
    version: str
    title: Union[str, None] = None


# ---- content blocks on the wire (_common) --------------------------------------------


class TextContent(Wire, tag_field="type", tag="text"):
    text: str
    meta: MetaField = field(default=None, name="_meta")


class ResourceLink(Wire, tag_field="type", tag="resource_link"):
    uri: str
    name: str
    mime_type: Union[str, None] = None
    meta: MetaField = field(default=None, name="_meta")


class TextResource(Wire):
    uri: str
    text: str
    mime_type: Union[str, None] = None


class EmbeddedResource(Wire, tag_field="type", tag="resource"):
    resource: TextResource
    meta: MetaField = field(default=None, name="_meta")


ContentBlock = Union[TextContent, ResourceLink, EmbeddedResource]


class ToolCallLocation(Wire):
    path: str
    line: Union[int, None] = None


class ToolCallContentBlock(Wire, tag_field="type", tag="content"):
    content: TextContent


class DiffContent(Wire, tag_field="type", tag="diff"):
    path: str
    new_text: str
    old_text: Union[str, None] = None


class TerminalContent(Wire, tag_field="type", tag="terminal"):
    terminal_id: str


ToolCallContent = Union[ToolCallContentBlock, DiffContent, TerminalContent]


# ---- session/prompt (_prompt, _queue) ------------------------------------------------


class PromptParams(Wire, forbid_unknown_fields=False):
    session_id: str
    prompt: list[ContentBlock]
    meta: MetaField = field(default=None, name="_meta")


class PromptRequest(Struct):
    """The JSON-RPC envelope of a prompt, decoded in one pass."""

    jsonrpc: Literal["2.0"]
    id: Union[int, str]
    method: Literal["session/prompt"]
    params: PromptParams


class SteerOutcome(Wire):
    landed: bool
    turn_id: Union[str, None] = None
    step: Union[int, None] = None
    message_seq: Union[int, None] = None


class PromptTetherMeta(Wire):
    turn_id: str
    steer: Union[SteerOutcome, None] = None
    turn_seq: Union[int, None] = None


class PromptResultMeta(Wire):
    tether: Union[PromptTetherMeta, None] = None


class PromptResult(Wire):
    stop_reason: StopReason
    meta: Union[PromptResultMeta, None] = field(default=None, name="_meta")


class SetModeParams(Wire):
    session_id: str
    mode_id: ModeId
    meta: MetaField = field(default=None, name="_meta")


class QueuedPrompt(Wire):
    queue_id: str
    preview: str
    queued_at: float
    state: Literal["queued", "notRun"] = "queued"


# ---- session/update (_updates, _config_options) --------------------------------------


class Compaction(Wire):
    replaced: int


class TurnEnded(Wire):
    turn_id: str
    stop_reason: TurnStopReason


class UpdateTetherMeta(Wire):
    notice: Union[bool, None] = None
    status: Union[MessageStatus, None] = None
    compaction: Union[Compaction, None] = None
    turn_ended: Union[TurnEnded, None] = None
    approved_by: Union[str, None] = None
    queue: Union[list[QueuedPrompt], None] = None
    steered: Union[bool, None] = None
    after_step: Union[int, None] = None
    turn_id: Union[str, None] = None
    message_seq: Union[int, None] = None


class TerminalInfo(Stored):  # ACP's terminal keys are snake_case (claude-agent-acp's)
    terminal_id: str
    cwd: str


class TerminalOutput(Stored):
    terminal_id: str
    data: str


class TerminalExit(Struct):  # exit_code and signal are written even when null
    terminal_id: str
    exit_code: Union[int, None]
    signal: Union[str, None]


class UpdateMeta(Stored):
    tether: Union[UpdateTetherMeta, None] = None
    terminal_info: Union[TerminalInfo, None] = None
    terminal_output: Union[TerminalOutput, None] = None
    terminal_exit: Union[TerminalExit, None] = None


class Update(Wire, tag_field="sessionUpdate"):
    """The members' base: `_meta` last, as today."""


class UserMessageChunk(Update, tag="user_message_chunk"):
    content: ContentBlock
    meta: Union[UpdateMeta, None] = field(default=None, name="_meta")


class AgentMessageChunk(Update, tag="agent_message_chunk"):
    content: TextContent
    meta: Union[UpdateMeta, None] = field(default=None, name="_meta")


class AgentThoughtChunk(Update, tag="agent_thought_chunk"):
    content: TextContent
    meta: Union[UpdateMeta, None] = field(default=None, name="_meta")


class ToolCall(Wire, tag_field="sessionUpdate", tag="tool_call", omit_defaults=False):
    """Written defaults (`kind`, `status`) beside left-out ones: UNSET marks the latter."""

    tool_call_id: str
    title: str
    kind: ToolKind = "other"
    status: ToolCallStatus = "pending"
    raw_input: Union[JsonObject, UnsetType] = UNSET
    content: Union[list[ToolCallContent], UnsetType] = UNSET
    locations: Union[list[ToolCallLocation], UnsetType] = UNSET
    raw_output: Union[JsonObject, UnsetType] = UNSET
    meta: Union[UpdateMeta, UnsetType] = field(default=UNSET, name="_meta")


class ToolCallUpdate(Update, tag="tool_call_update"):
    tool_call_id: str
    status: Union[ToolCallStatus, None] = None
    title: Union[str, None] = None
    kind: Union[ToolKind, None] = None
    raw_input: Union[JsonObject, None] = None
    content: Union[list[ToolCallContent], None] = None
    locations: Union[list[ToolCallLocation], None] = None
    raw_output: Union[JsonObject, None] = None
    meta: Union[UpdateMeta, None] = field(default=None, name="_meta")


class PlanEntry(Wire):
    content: str
    priority: PlanEntryPriority
    status: PlanEntryStatus


class Plan(Update, tag="plan"):
    entries: list[PlanEntry]
    meta: Union[UpdateMeta, None] = field(default=None, name="_meta")


class SessionInfoUpdate(Update, tag="session_info_update"):
    title: Union[str, None] = None
    updated_at: Union[str, None] = None
    meta: Union[UpdateMeta, None] = field(default=None, name="_meta")


class CurrentModeUpdate(Update, tag="current_mode_update"):
    current_mode_id: ModeId
    meta: Union[UpdateMeta, None] = field(default=None, name="_meta")


class SessionConfigSelectOption(Wire):
    value: str
    name: str
    description: Union[str, None] = None


class SessionConfigOption(Wire, tag_field="type", tag="select"):
    id: str
    name: str
    current_value: str
    options: list[SessionConfigSelectOption]
    category: Union[str, None] = None
    description: Union[str, None] = None


class ConfigOptionUpdate(Update, tag="config_option_update"):
    config_options: list[SessionConfigOption]
    meta: Union[UpdateMeta, None] = field(default=None, name="_meta")


class UsageUpdate(Update, tag="usage_update"):
    used: int
    size: int
    meta: Union[UpdateMeta, None] = field(default=None, name="_meta")


class AvailableCommandInput(Wire):
    hint: str


class AvailableCommand(Wire):
    name: str
    description: str
    input: Union[AvailableCommandInput, None] = None


class AvailableCommandsUpdate(Update, tag="available_commands_update"):
    available_commands: list[AvailableCommand]
    meta: Union[UpdateMeta, None] = field(default=None, name="_meta")


SessionUpdate = Union[
    UserMessageChunk, AgentMessageChunk, AgentThoughtChunk, ToolCall, ToolCallUpdate, Plan,
    SessionInfoUpdate, CurrentModeUpdate, ConfigOptionUpdate, AvailableCommandsUpdate, UsageUpdate,
]


class SessionNotification(Wire):
    session_id: str
    update: SessionUpdate
    meta: MetaField = field(default=None, name="_meta")


class UpdateNotification(Struct, kw_only=True):
    """The whole `session/update` message (what `emitter.frame` writes)."""

    jsonrpc: str = "2.0"
    method: str = "session/update"
    params: SessionNotification


# ---- the stored conversation (_conversation_model, _conversation_json) ----------------
# Blocks are stored in ACP's spelling (camelCase), messages in the store's (snake_case),
# tagged by `role`. Not expressible: a block's unknown keys kept in `extra`, a block of an
# unknown type kept whole (`OtherBlock`), and two members with the same tag (a compaction
# summary is a `user` message with `compaction`: one Struct with an optional field here).


class ImageBlock(Wire, tag_field="type", tag="image"):
    data: Union[str, None] = None
    mime_type: Union[str, None] = None
    uri: Union[str, None] = None


class AudioBlock(Wire, tag_field="type", tag="audio"):
    data: Union[str, None] = None
    mime_type: Union[str, None] = None


class ResourceContents(Wire):
    uri: str
    mime_type: Union[str, None] = None
    text: Union[str, None] = None
    blob: Union[str, None] = None


class StoredResource(Wire, tag_field="type", tag="resource"):
    resource: ResourceContents


class StoredLink(Wire, tag_field="type", tag="resource_link"):
    uri: str
    name: Union[str, None] = None
    mime_type: Union[str, None] = None


class StoredText(Wire, tag_field="type", tag="text"):
    text: str


StoredBlock = Union[StoredText, ImageBlock, AudioBlock, StoredLink, StoredResource]


class GuardFinding(Stored):
    pattern: str
    excerpt: str


class GuardRecord(Stored, omit_defaults=False):
    findings: list[GuardFinding] = []
    blocked: bool = False


class CompactionRecord(Stored):
    replaced: int = 0
    kept: Union[int, None] = None


class UserMessage(Stored, tag_field="role", tag="user"):
    content: list[StoredBlock]
    guard: Union[GuardRecord, None] = None
    compaction: Union[CompactionRecord, None] = None


class StoredToolCall(Stored):
    id: str
    name: str
    arguments: JsonObject = {}
    raw_arguments: Union[str, None] = None


class ThinkingBlock(Stored, tag_field="type", tag="thinking"):
    thinking: str
    signature: Union[str, None] = None


class RedactedThinking(Stored, tag_field="type", tag="redacted_thinking"):
    data: str


class AssistantMessage(Stored, tag_field="role", tag="assistant", omit_defaults=False):
    text: str = ""
    thinking: Union[str, UnsetType] = UNSET
    thinking_signature: Union[str, UnsetType] = UNSET
    thinking_blocks: Union[list[Union[ThinkingBlock, RedactedThinking]], UnsetType] = UNSET
    tool_calls: Union[list[StoredToolCall], UnsetType] = UNSET


class Location(Stored):
    path: str
    line: Union[int, None] = None


class ToolResultMessage(Stored, tag_field="role", tag="tool", omit_defaults=False):
    tool_call_id: str
    name: str
    content: Any = ""  # a string, or an imported snapshot's JSON kept as it is
    is_error: bool = False
    title: Union[str, UnsetType] = UNSET
    kind: Union[str, UnsetType] = UNSET
    locations: Union[list[Location], UnsetType] = UNSET
    ledger: Any = UNSET
    blocks: Union[list[StoredBlock], UnsetType] = UNSET


class SystemMessage(Stored, tag_field="role", tag="system"):
    content: str


Message = Union[UserMessage, AssistantMessage, ToolResultMessage, SystemMessage]


# ---- the snapshot (_snapshots; snake_case) -------------------------------------------

TurnStatus = Literal["running", "complete", "cancelled", "interrupted", "error"]
StoredMessageStatus = Literal["complete", "incomplete", "cancelled", "interrupted", "error"]


class SnapshotSession(Stored, omit_defaults=False):
    id: str
    workspace: str
    title: Union[str, None]
    mode: str
    created_at: float
    updated_at: float
    metadata: JsonObject = {}


class PendingCall(Stored):
    id: str
    name: str
    arguments: JsonObject
    started: Union[bool, None] = None


class PendingApprovals(Stored):
    step: int
    calls: list[PendingCall]


class SnapshotTurn(Stored):
    id: str
    seq: int
    status: TurnStatus
    stop_reason: Union[str, None]
    started_at: float
    finished_at: Union[float, None]
    error: Union[str, None]
    pending: Union[PendingApprovals, None] = None


class SnapshotMessage(Stored):
    seq: int
    turn_id: Union[str, None]
    role: Literal["user", "assistant", "tool", "system"]
    status: StoredMessageStatus
    created_at: float
    body: Message  # typed here; today raw JSON checked by store/snapshot_checks.py
    rewound: Union[int, None] = None


class SnapshotRule(Stored):
    kind: str
    pattern: str
    decision: Literal["allow", "deny"]


class Snapshot(Stored, omit_defaults=False):
    tether_snapshot: int
    session: SnapshotSession
    turns: list[SnapshotTurn]
    messages: list[SnapshotMessage]
    reports: list[JsonObject]
    pending: Union[JsonObject, None]
    exported_at: Union[float, UnsetType] = UNSET
    rules: list[SnapshotRule] = []
    checkpoints: Union[JsonObject, UnsetType] = UNSET


# ---- initialize (_initialize) ----------------------------------------------------------


class FileSystemCapabilities(Wire, omit_defaults=False):
    read_text_file: bool = False
    write_text_file: bool = False


class ClientTetherCapabilities(Wire, omit_defaults=False):
    named_permission_options: bool = False
    clear_session: bool = False


class ClientCapabilitiesMeta(Stored):
    terminal_output: Union[bool, None] = None
    tether: Union[ClientTetherCapabilities, None] = None


class ClientCapabilities(Wire, omit_defaults=False):
    fs: FileSystemCapabilities = msgspec.field(default_factory=FileSystemCapabilities)
    terminal: bool = False
    meta: Union[ClientCapabilitiesMeta, UnsetType] = field(default=UNSET, name="_meta")


class WorkspaceFolder(Wire):
    uri: str
    name: str


class InitializeParams(Wire):
    protocol_version: Union[int, None] = None
    client_capabilities: Union[ClientCapabilities, None] = None
    client_info: Union[Implementation, None] = None
    process_id: Union[int, None] = None
    root_uri: Union[str, None] = None
    root_path: Union[str, None] = None
    workspace_folders: Union[list[WorkspaceFolder], None] = None
    capabilities: Union[JsonObject, None] = None
    initialization_options: Union[JsonObject, None] = None
    meta: MetaField = field(default=None, name="_meta")


class PromptCapabilities(Wire, omit_defaults=False):
    image: bool = False
    audio: bool = False
    embedded_context: bool = True


class McpCapabilities(Wire, omit_defaults=False):
    http: bool = False
    sse: bool = False


class SessionCapabilities(Wire, omit_defaults=False):
    list: Union[JsonObject, None] = msgspec.field(default_factory=dict)
    resume: Union[JsonObject, None] = msgspec.field(default_factory=dict)
    close: Union[JsonObject, None] = msgspec.field(default_factory=dict)
    delete: Union[JsonObject, None] = msgspec.field(default_factory=dict)


class AgentCapabilities(Wire, omit_defaults=False):
    load_session: bool = True
    prompt_capabilities: PromptCapabilities = msgspec.field(default_factory=PromptCapabilities)
    mcp_capabilities: McpCapabilities = msgspec.field(default_factory=McpCapabilities)
    session_capabilities: SessionCapabilities = msgspec.field(default_factory=SessionCapabilities)


class TextDocumentSyncOptions(Wire):
    open_close: bool
    change: int
    save: bool


class ExecuteCommandOptions(Wire):
    commands: list[str]


class CodeActionOptions(Wire):
    code_action_kinds: list[str]


class ServerCapabilities(Wire):
    text_document_sync: TextDocumentSyncOptions
    experimental: JsonObject
    execute_command_provider: Union[ExecuteCommandOptions, None] = None
    code_action_provider: Union[CodeActionOptions, None] = None


class LspInitializeResult(Wire):
    capabilities: ServerCapabilities
    server_info: Implementation


class RefusedSetting(Wire):
    key: str
    file: str
    reason: str
    message: str


class InitializeTetherMeta(Wire):
    lsp: Union[LspInitializeResult, None] = None
    config_refused: Union[list[RefusedSetting], None] = None


class InitializeResultMeta(Wire):
    tether: Union[InitializeTetherMeta, None] = None


class InitializeResult(Wire):
    protocol_version: int
    agent_capabilities: AgentCapabilities
    agent_info: Implementation
    auth_methods: list[JsonObject]
    capabilities: Union[ServerCapabilities, None] = None
    server_info: Union[Implementation, None] = None
    meta: Union[InitializeResultMeta, None] = field(default=None, name="_meta")


# ---- a checked field (today: `_fields.wire(minimum=, maximum=, error=)`) ---------------


class SearchParams(Wire):
    query: Annotated[str, Meta(min_length=1)]
    limit: Annotated[int, Meta(ge=1, le=200)] = 20
    cwd: Union[str, None] = None


STRUCTS = [v for v in list(globals().values()) if isinstance(v, type) and issubclass(v, Struct) and v.__module__ == __name__]
"""Every Struct of the slice (bases included), for the cold-cost count."""
