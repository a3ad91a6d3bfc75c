"""Typed messages of the Tether protocol (ACP v1 vocabulary plus `_tether/` extensions).

Owns: the shape of every request's params and result and of every `session/update`. Field
names are snake_case here and camelCase on the wire (`meta` is `_meta`); `_converter.py`
does the renaming and `_schema.py` turns these classes into `protocol/schema.json`.
Must not: hold behaviour. The daemon builds hot-path notifications as plain dicts of the
same shape (see `updates.py`); the tests check those dicts against the generated schema.
"""

from __future__ import annotations

from typing import Any, Literal, Union

import attrs

Meta = Union[dict[str, Any], None]

StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]
ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
ToolCallStatus = Literal["pending", "in_progress", "completed", "failed"]
ModeId = Literal["read-only", "ask", "auto-edit", "full-auto"]


# ---- shared pieces -----------------------------------------------------------------


@attrs.define
class Implementation:
    name: str
    version: str
    title: Union[str, None] = None


@attrs.define
class TextContent:
    text: str
    type: Literal["text"] = "text"
    meta: Meta = None


@attrs.define
class ResourceLink:
    uri: str
    name: str
    type: Literal["resource_link"] = "resource_link"
    mime_type: Union[str, None] = None
    meta: Meta = None


@attrs.define
class TextResource:
    uri: str
    text: str
    mime_type: Union[str, None] = None


@attrs.define
class EmbeddedResource:
    resource: TextResource
    type: Literal["resource"] = "resource"
    meta: Meta = None


ContentBlock = Union[TextContent, ResourceLink, EmbeddedResource]


@attrs.define
class ToolCallLocation:
    path: str
    line: Union[int, None] = None


@attrs.define
class ToolCallContentBlock:
    """`{"type": "content", "content": <ContentBlock>}` inside a tool call."""

    content: TextContent
    type: Literal["content"] = "content"


@attrs.define
class SessionMode:
    id: ModeId
    name: str
    description: Union[str, None] = None


@attrs.define
class SessionModeState:
    current_mode_id: ModeId
    available_modes: list[SessionMode]


# ---- initialize ----------------------------------------------------------------------


@attrs.define
class FileSystemCapabilities:
    read_text_file: bool = False
    write_text_file: bool = False


@attrs.define
class ClientCapabilities:
    fs: FileSystemCapabilities = attrs.Factory(FileSystemCapabilities)
    terminal: bool = False
    meta: Meta = None


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
    capabilities: Union[dict[str, Any], None] = None
    initialization_options: Union[dict[str, Any], None] = None
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
    list: Union[dict[str, Any], None] = attrs.Factory(dict)
    resume: Union[dict[str, Any], None] = attrs.Factory(dict)
    close: Union[dict[str, Any], None] = attrs.Factory(dict)
    delete: Union[dict[str, Any], None] = attrs.Factory(dict)


@attrs.define
class AgentCapabilities:
    load_session: bool = True
    prompt_capabilities: PromptCapabilities = attrs.Factory(PromptCapabilities)
    mcp_capabilities: McpCapabilities = attrs.Factory(McpCapabilities)
    session_capabilities: SessionCapabilities = attrs.Factory(SessionCapabilities)


@attrs.define
class InitializeResult:
    protocol_version: int
    agent_capabilities: AgentCapabilities
    agent_info: Implementation
    auth_methods: list[dict[str, Any]]
    capabilities: dict[str, Any]
    server_info: Implementation


# ---- sessions -----------------------------------------------------------------------


@attrs.define
class NewSessionParams:
    cwd: str
    mcp_servers: list[dict[str, Any]] = attrs.Factory(list)
    meta: Meta = None


@attrs.define
class NewSessionResult:
    session_id: str
    modes: SessionModeState


@attrs.define
class LoadSessionParams:
    session_id: str
    cwd: str
    mcp_servers: list[dict[str, Any]] = attrs.Factory(list)
    meta: Meta = None


@attrs.define
class LoadSessionResult:
    modes: SessionModeState


ResumeSessionParams = LoadSessionParams
ResumeSessionResult = LoadSessionResult


@attrs.define
class ListSessionsParams:
    cwd: Union[str, None] = None
    cursor: Union[str, None] = None
    meta: Meta = None


@attrs.define
class SessionInfo:
    session_id: str
    cwd: str
    title: Union[str, None] = None
    updated_at: Union[str, None] = None


@attrs.define
class ListSessionsResult:
    sessions: list[SessionInfo]
    next_cursor: Union[str, None] = None


@attrs.define
class SessionIdParams:
    """Params of `session/close`, `session/delete` and `session/cancel`."""

    session_id: str
    meta: Meta = None


@attrs.define
class EmptyResult:
    meta: Meta = None


@attrs.define
class SetModeParams:
    session_id: str
    mode_id: ModeId
    meta: Meta = None


# ---- prompt turn --------------------------------------------------------------------


@attrs.define
class PromptParams:
    session_id: str
    prompt: list[ContentBlock]
    meta: Meta = None


@attrs.define
class PromptResult:
    stop_reason: StopReason
    meta: Meta = None


@attrs.define
class CancelRequestParams:
    """LSP's `$/cancelRequest`: cancels the request with that id."""

    id: Union[int, str]


# ---- session/update -----------------------------------------------------------------


@attrs.define
class UserMessageChunk:
    content: ContentBlock
    session_update: Literal["user_message_chunk"] = "user_message_chunk"
    meta: Meta = None


@attrs.define
class AgentMessageChunk:
    content: TextContent
    session_update: Literal["agent_message_chunk"] = "agent_message_chunk"
    meta: Meta = None


@attrs.define
class AgentThoughtChunk:
    content: TextContent
    session_update: Literal["agent_thought_chunk"] = "agent_thought_chunk"
    meta: Meta = None


@attrs.define
class ToolCall:
    tool_call_id: str
    title: str
    kind: ToolKind = "other"
    status: ToolCallStatus = "pending"
    content: list[ToolCallContentBlock] = attrs.Factory(list)
    locations: list[ToolCallLocation] = attrs.Factory(list)
    raw_input: Union[dict[str, Any], None] = None
    raw_output: Union[dict[str, Any], None] = None
    session_update: Literal["tool_call"] = "tool_call"
    meta: Meta = None


@attrs.define
class ToolCallUpdate:
    tool_call_id: str
    title: Union[str, None] = None
    kind: Union[ToolKind, None] = None
    status: Union[ToolCallStatus, None] = None
    content: Union[list[ToolCallContentBlock], None] = None
    locations: Union[list[ToolCallLocation], None] = None
    raw_input: Union[dict[str, Any], None] = None
    raw_output: Union[dict[str, Any], None] = None
    session_update: Literal["tool_call_update"] = "tool_call_update"
    meta: Meta = None


@attrs.define
class PlanEntry:
    content: str
    priority: Literal["high", "medium", "low"]
    status: Literal["pending", "in_progress", "completed"]


@attrs.define
class Plan:
    entries: list[PlanEntry]
    session_update: Literal["plan"] = "plan"
    meta: Meta = None


@attrs.define
class SessionInfoUpdate:
    title: Union[str, None] = None
    updated_at: Union[str, None] = None
    session_update: Literal["session_info_update"] = "session_info_update"
    meta: Meta = None


@attrs.define
class CurrentModeUpdate:
    current_mode_id: ModeId
    session_update: Literal["current_mode_update"] = "current_mode_update"
    meta: Meta = None


@attrs.define
class UsageUpdate:
    used: int
    size: int
    session_update: Literal["usage_update"] = "usage_update"
    meta: Meta = None


SessionUpdate = Union[
    UserMessageChunk,
    AgentMessageChunk,
    AgentThoughtChunk,
    ToolCall,
    ToolCallUpdate,
    Plan,
    SessionInfoUpdate,
    CurrentModeUpdate,
    UsageUpdate,
]


@attrs.define
class SessionNotification:
    session_id: str
    update: SessionUpdate
    meta: Meta = None


# ---- _tether extensions ------------------------------------------------------------


@attrs.define
class ReportParams:
    """`_tether/session/report`: run reports of a session, or of one turn."""

    session_id: str
    turn_id: Union[str, None] = None
    meta: Meta = None


@attrs.define
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0


@attrs.define
class ToolCallReport:
    call_id: str
    tool_name: str
    arguments: dict[str, Any]
    result_size_bytes: int
    latency_ms: float
    error: Union[str, None] = None


@attrs.define
class StepReport:
    index: int
    llm_latency_ms: float
    first_token_ms: Union[float, None]
    usage: Usage
    finish_reason: str
    tool_calls: list[ToolCallReport]
    tool_total_ms: float


@attrs.define
class RunReport:
    turn_id: str
    session_id: str
    provider: str
    model: str
    started_at: float
    completed_at: float
    total_ms: float
    stop_reason: str
    status: str
    steps: list[StepReport]
    step_count: int
    tool_call_count: int
    total_usage: Usage
    total_llm_ms: float
    total_tool_ms: float
    error: Union[str, None] = None


@attrs.define
class ReportResult:
    reports: list[RunReport]


# Method tables: the one place that says which params/result class each method uses.
CLIENT_REQUESTS: dict[str, tuple[Any, Any]] = {
    "initialize": (InitializeParams, InitializeResult),
    "shutdown": (None, None),
    "session/new": (NewSessionParams, NewSessionResult),
    "session/load": (LoadSessionParams, LoadSessionResult),
    "session/resume": (ResumeSessionParams, ResumeSessionResult),
    "session/list": (ListSessionsParams, ListSessionsResult),
    "session/close": (SessionIdParams, EmptyResult),
    "session/delete": (SessionIdParams, EmptyResult),
    "session/set_mode": (SetModeParams, EmptyResult),
    "session/prompt": (PromptParams, PromptResult),
    "_tether/session/report": (ReportParams, ReportResult),
    "_tether/daemon/stats": (None, None),  # counters for health checks; see SPEC.md
}
CLIENT_NOTIFICATIONS: dict[str, Any] = {
    "initialized": None,
    "exit": None,
    "session/cancel": SessionIdParams,
    "$/cancelRequest": CancelRequestParams,
}
AGENT_NOTIFICATIONS: dict[str, Any] = {
    "session/update": SessionNotification,
}
