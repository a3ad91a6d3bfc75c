"""Which ACP v1 classes Tether generates, per area module, and where each deliberately differs.

Owns: `AREAS` (area -> aliases and classes, in module order), `IMPORTS` (Tether's own names a
generated class may use) and, as comments beside an entry, why Tether's class is not upstream's.
Must not: be imported by the daemon (protocol/tools/gen_acp.py reads it).
A field spec is `py_name` (type and required-ness from upstream), `py_name: TYPE` (Tether's
type), `... = DEFAULT` (Tether's default; `= required`: required although upstream's is not).
A class lists only the fields Tether reads or writes, in the order it writes them (key order on
the wire); upstream's others are left out (unknown keys are ignored when read).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Cls:
    name: str  # Tether's name
    upstream: str  # the `$defs` entry
    fields: list[str]
    base: str = "Wire"
    kw: dict[str, str] = field(default_factory=dict)
    doc: str | None = None  # Tether's docstring (the schema's description), else none
    preview: bool = False  # `upstream` is the v2 Preview schema's (a method v1's schema lacks)


@dataclass(frozen=True)
class Alias:
    name: str
    upstream: str | None = None  # an enum: its values as a `Literal`
    text: str | None = None  # else Tether's own right-hand side
    doc: str | None = None


META = "meta"  # `_meta`: `Meta` (any object, never checked), left out while None
TYPE = {"tag_field": '"type"'}

# The table is laid out by hand, an entry a line or two with its reason beside it: the
# formatter would give each field its own line (ruff format leaves it as written).
# fmt: off
IMPORTS = {
    "Meta": ".._codec", "NonEmpty": ".._codec", "Wire": ".._codec", "JsonObject": ".._json",
    "QueuedPrompt": ".._queue", "SteerOutcome": ".._queue", "PromptResultMeta": ".._queue",
    "UpdateMeta": ".._update_meta", "ClientCapabilitiesMeta": ".._capabilities_meta",
    "InitializeResultMeta": ".._capabilities_meta",
    "PermissionRequestMeta": ".._permission_meta", "PermissionResultMeta": ".._permission_meta",
}
UPDATE = {"tag_field": '"sessionUpdate"'}
UPDATE_META = "meta: Union[UpdateMeta, None] = None"  # `_meta`: Tether's keys typed (`_update_meta`)
OUTCOME = {"tag_field": '"outcome"'}

AREAS: dict[str, list[Cls | Alias]] = {
    "modes": [
        # Tether's four modes (upstream: any string); a bad one is refused with the list
        Alias("ModeId", text='Literal["read-only", "ask", "auto-edit", "full-auto"]'),
        Cls("SessionMode", "SessionMode", ["id: ModeId", "name", "description"]),
        Cls("SessionModeState", "SessionModeState", ["current_mode_id: ModeId", "available_modes"]),
    ],
    "config_options": [
        Cls("SessionConfigSelectOption", "SessionConfigSelectOption", ["value", "name", "description"]),
        # selects only (Tether offers no boolean option): the select variant, tag first;
        # `category` an open enum upstream: any string; `options` never grouped
        Cls("SessionConfigOption", "SessionConfigOption",
            ["id", "name", "current_value", "options: list[SessionConfigSelectOption]", "category: Union[str, None]", "description"],
            kw={**TYPE, "tag": '"select"'}, doc='A select option: `category` is ACP\'s ("model", "mode", ...), UX only.'),
        Cls("SetConfigOptionParams", "SetSessionConfigOptionRequest",
            ["session_id", "config_id", "value: str", META]),  # selects only: a string value
        Cls("SetConfigOptionResult", "SetSessionConfigOptionResponse", ["config_options", META],
            doc="The full set of options, with their values after the change."),
    ],
    "sessions": [
        # `mcpServers` written even when empty (ACP requires it), read as plain objects (the
        # daemon checks each server itself); `_meta` written while set, even null
        Cls("NewSessionParams", "NewSessionRequest", [
            "cwd", "mcp_servers: list[JsonObject] = msgspec.field(default_factory=list)",
            "meta: Union[JsonObject, None, UnsetType] = msgspec.field(default=UNSET, name=\"_meta\")",
        ], kw={"omit_defaults": "False"}),
        # `modes` always sent (upstream: optional)
        Cls("NewSessionResult", "NewSessionResponse", ["session_id", "modes = required", "config_options"],
            doc="Also the result of `session/fork` and `_tether/session/fork`."),
        Cls("LoadSessionParams", "LoadSessionRequest", [
            "session_id", "cwd", "mcp_servers: list[JsonObject] = msgspec.field(default_factory=list)",
            "meta: Union[JsonObject, None, UnsetType] = msgspec.field(default=UNSET, name=\"_meta\")",
        ], kw={"omit_defaults": "False"}, doc="Params of `session/load` and of `session/resume`."),
        Cls("LoadSessionResult", "LoadSessionResponse", ["modes = required", "config_options"],
            doc="Result of `session/load` and of `session/resume`."),
        Cls("ListSessionsParams", "ListSessionsRequest", ["cwd", "cursor", META]),
        # `updatedAt` always written (null when unknown); `_meta.tether` names a sub-agent's parent
        Cls("SessionInfo", "SessionInfo", ["session_id", "cwd", "updated_at: Union[str, None] = required", "title", META], doc=(
            "`title` is omitted until the first prompt gives it one (never null: some clients\n"
            "    crash on a null title); `updatedAt` is ISO 8601 UTC; a sub-agent's session names the\n"
            "    session and `delegate` call it ran under in `_meta.tether`.")),
        Cls("ListSessionsResult", "ListSessionsResponse", ["sessions", "next_cursor"]),
        # one class for `session/close`, `session/delete` and `session/cancel` (same shape)
        Cls("SessionIdParams", "CloseSessionRequest", ["session_id", META],
            doc="Params of `session/close`, `session/delete` and `session/cancel`."),
        Cls("EmptyResult", "CloseSessionResponse", [META], doc=(
            "`{}`: the result of `session/close`, `session/delete`, `session/set_mode`,\n"
            "    `_tether/rules/remove`.")),
        Cls("SetModeParams", "SetSessionModeRequest", ["session_id", "mode_id: ModeId", META]),
        # stopping one call (§12.4): v2's methods, also served on v1 (`_tether/toolCall/cancel`)
        Cls("ToolCallCancelParams", "CancelToolCallRequest", ["session_id", "tool_call_id", META], preview=True,
            doc="Params of `tool_call/cancel` and `_tether/toolCall/cancel` (§12.4): the call to stop."),
        Cls("TerminalCancelParams", "CancelTerminalRequest", ["session_id", "terminal_id", META], preview=True,
            doc="Params of `terminal/cancel`: the command whose terminal this is is stopped."),
    ],
    "content": [
        Alias("StopReason", "StopReason"),
        Alias("ToolKind", "ToolKind"),
        Alias("ToolCallStatus", "ToolCallStatus"),
        Alias("PlanEntryPriority", "PlanEntryPriority"),
        Alias("PlanEntryStatus", "PlanEntryStatus"),
        # the schema's order (`title` before `version`: keyword-only, so an optional one may lead)
        Cls("Implementation", "Implementation", ["name", "title", "version"], kw={"kw_only": "True"}),
        # content blocks: text, resource links and text resources (no images, audio or blobs:
        # `promptCapabilities` says so); no `annotations`
        Cls("TextContent", "TextContent", ["text", META], kw={**TYPE, "tag": '"text"'}),
        Cls("ResourceLink", "ResourceLink", ["uri", "name", "mime_type", META], kw={**TYPE, "tag": '"resource_link"'}),
        Cls("TextResource", "TextResourceContents", ["uri", "text", "mime_type"]),
        Cls("EmbeddedResource", "EmbeddedResource", ["resource: TextResource", META], kw={**TYPE, "tag": '"resource"'}),
        Alias("ContentBlock", "ContentBlock", text="Union[TextContent, ResourceLink, EmbeddedResource]"),
        Cls("ToolCallLocation", "ToolCallLocation", ["path", "line"]),
        # a tool call's content block is text only (what Tether writes)
        Cls("ToolCallContentBlock", "Content", ["content: TextContent"], kw={**TYPE, "tag": '"content"'},
            doc='`{"type": "content", "content": <ContentBlock>}` inside a tool call.'),
        Cls("DiffContent", "Diff", ["path", "new_text", "old_text"], kw={**TYPE, "tag": '"diff"'}, doc=(
            '`{"type": "diff", path, oldText?, newText}`: whole file texts (SPEC §3.22).\n\n'
            "    `path` is absolute (for a move, the destination); `oldText` is absent for a new\n"
            '    file; `newText` is `""` for a deletion.')),
        Cls("TerminalContent", "Terminal", ["terminal_id"], kw={**TYPE, "tag": '"terminal"'}, doc=(
            '`{"type": "terminal", terminalId}`: command output shown as a terminal (only for\n'
            "    clients that set `clientCapabilities._meta.terminal_output`, SPEC §4.9).")),
        Alias("ToolCallContent", "ToolCallContent", text="Union[ToolCallContentBlock, DiffContent, TerminalContent]"),
    ],
    "prompt": [
        # `idempotencyKey`: Tether's (v2's, accepted on v1 too): at most one insertion per
        # (session, key), a retry gets the first's answer (SPEC §12.5)
        Cls("PromptParams", "PromptRequest", ["session_id", "prompt", META, "idempotency_key: Union[str, None] = None"]),
        # `_meta.tether` typed: the turn's id, seq and where a steered message went
        Cls("PromptResult", "PromptResponse", ["stop_reason", "meta: Union[PromptResultMeta, None] = None"],
            doc="`_meta.tether.turnId` names the turn's run report (`_tether/session/report`)."),
    ],
    "updates": [
        Cls("UserMessageChunk", "ContentChunk", ["content", UPDATE_META], kw={**UPDATE, "tag": '"user_message_chunk"'},
            doc="Replay only: one per block of a stored prompt."),
        # the agent's chunks are text only (what Tether writes); no `messageId` on v1
        Cls("AgentMessageChunk", "ContentChunk", ["content: TextContent", UPDATE_META],
            kw={**UPDATE, "tag": '"agent_message_chunk"'}),
        Cls("AgentThoughtChunk", "ContentChunk", ["content: TextContent", UPDATE_META],
            kw={**UPDATE, "tag": '"agent_thought_chunk"'}),
        # `kind` and `status` always written with upstream's defaults; the rest UNSET (left
        # out) until known, `rawInput`/`rawOutput` a JSON object (upstream: any value)
        Cls("ToolCall", "ToolCall", [
            "tool_call_id", "title", 'kind: ToolKind = "other"', 'status: ToolCallStatus = "pending"',
            "raw_input: Union[JsonObject, None, UnsetType] = UNSET",
            "content: Union[list[ToolCallContent], UnsetType] = UNSET",
            "locations: Union[list[ToolCallLocation], UnsetType] = UNSET",
            "raw_output: Union[JsonObject, None, UnsetType] = UNSET",
            "meta: Union[UpdateMeta, None, UnsetType] = UNSET",
        ], kw={**UPDATE, "tag": '"tool_call"', "omit_defaults": "False"}, doc=(
            "A call's first report: `kind` and `status` always written, the rest left out\n"
            "    while unset (no content: none yet).")),
        Cls("ToolCallUpdate", "ToolCallUpdate", [
            "tool_call_id", "status", "title", "kind", "raw_input: Union[JsonObject, None]", "content",
            "locations", "raw_output: Union[JsonObject, None]", UPDATE_META,
        ], kw={**UPDATE, "tag": '"tool_call_update"'},
            doc="A change to a tool call: fields left out are unchanged; `content` replaces."),
        Cls("PlanEntry", "PlanEntry", ["content", "priority", "status"]),
        Cls("Plan", "Plan", ["entries", UPDATE_META], kw={**UPDATE, "tag": '"plan"'},
            doc="The whole plan, replacing the previous one (an empty list clears it)."),
        Cls("SessionInfoUpdate", "SessionInfoUpdate", ["title", "updated_at", UPDATE_META],
            kw={**UPDATE, "tag": '"session_info_update"'}),
        Cls("CurrentModeUpdate", "CurrentModeUpdate", ["current_mode_id: ModeId", UPDATE_META],
            kw={**UPDATE, "tag": '"current_mode_update"'}, doc=(
                "Sent when the mode changes other than by the client's own `session/set_mode`\n"
                '    (`session/set_config_option` on the "mode" option, the `/mode` slash command).')),
        Cls("ConfigOptionUpdate", "ConfigOptionUpdate", ["config_options", UPDATE_META],
            kw={**UPDATE, "tag": '"config_option_update"'},
            doc="The full set of session config options, after one changed on the daemon's side."),
        Cls("UsageUpdate", "UsageUpdate", ["used", "size", UPDATE_META], kw={**UPDATE, "tag": '"usage_update"'}),
        Cls("AvailableCommandInput", "UnstructuredCommandInput", ["hint"],
            doc="Unstructured text after the command's name; `hint` is shown until it is typed."),
        # the input is always unstructured (upstream's only kind, as a one-member union)
        Cls("AvailableCommand", "AvailableCommand", ["name", "description", "input: Union[AvailableCommandInput, None]"],
            doc="A slash command: sent as a prompt whose first text block is `/name [input]`."),
        Cls("AvailableCommandsUpdate", "AvailableCommandsUpdate", ["available_commands", UPDATE_META],
            kw={**UPDATE, "tag": '"available_commands_update"'}, doc=(
                "The whole list of slash commands, replacing the previous one (after\n"
                "    `session/new`, after `session/load`, and when the list changes).")),
        # the kinds Tether sends
        Alias("SessionUpdate", "SessionUpdate", text=(
            "Union[\n    UserMessageChunk,\n    AgentMessageChunk,\n    AgentThoughtChunk,\n    ToolCall,\n"
            "    ToolCallUpdate,\n    Plan,\n    SessionInfoUpdate,\n    CurrentModeUpdate,\n"
            "    ConfigOptionUpdate,\n    AvailableCommandsUpdate,\n    UsageUpdate,\n]")),
        Cls("SessionNotification", "SessionNotification", ["session_id", "update", META],
            doc="`session/update` params."),
    ],
    "client_requests": [
        Alias("PermissionOptionKind", "PermissionOptionKind"),
        # upstream's `ToolCallUpdate` as the call asked about; `rawInput` a JSON object
        Cls("PermissionToolCall", "ToolCallUpdate", [
            "tool_call_id", "title", "kind", "status", "content", "locations", "raw_input: Union[JsonObject, None]",
        ], doc=(
            "The tool call asked about: the same `toolCallId`, `title`, `kind` and `locations`\n"
            "    as its `session/update`s (locations absolute, with the first changed line where\n"
            "    known; none for a command); `content` holds `diff` blocks for file changes or the\n"
            "    command as a text block.")),
        Cls("PermissionOption", "PermissionOption", ["option_id", "name", "kind"], doc=(
            "`optionId` is the kind, or `allow_once_network` (kind `allow_once`) for a\n"
            "    sandboxed command that may be given the network.")),
        Cls("RequestPermissionParams", "RequestPermissionRequest", [
            "session_id", "tool_call: PermissionToolCall", "options",
            "meta: Union[PermissionRequestMeta, None] = None",  # Tether's `_meta.tether` typed
        ]),
        Cls("SelectedOutcome", "SelectedPermissionOutcome", [
            "option_id", "meta: Union[PermissionResultMeta, None] = None",
        ], kw={**OUTCOME, "tag": '"selected"'}),
        Cls("CancelledOutcome", "", [], kw={**OUTCOME, "tag": '"cancelled"'},  # (inline upstream)
            doc='`{"outcome": "cancelled"}`: the prompt turn was cancelled while the client asked.'),
        Alias("RequestPermissionOutcome", "RequestPermissionOutcome", text="Union[SelectedOutcome, CancelledOutcome]"),
        Cls("RequestPermissionResult", "RequestPermissionResponse", [
            "outcome", "meta: Union[PermissionResultMeta, None] = None",
        ], doc="`_meta.tether.acceptedHunks` may sit here or on the selected outcome."),
        # Tether reads whole files: no `line`, `limit`
        Cls("ReadTextFileParams", "ReadTextFileRequest", ["session_id", "path"],
            doc="Always the whole file: Tether never sends `line` or `limit`."),
        Cls("ReadTextFileResult", "ReadTextFileResponse", ["content"]),
        Cls("WriteTextFileParams", "WriteTextFileRequest", ["session_id", "path", "content"],
            doc="`content` is the whole new text; `path` is absolute."),
        # `{}` or null: clients answer either
        Alias("WriteTextFileResult", "WriteTextFileResponse", text="Union[EmptyResult, None]"),
    ],
    "initialize": [
        # LSP's `initialize` and `$/cancelRequest` are LSP's, hand-declared (`_lsp_lifecycle`)
        Cls("FileSystemCapabilities", "FileSystemCapabilities", ["read_text_file", "write_text_file"],
            kw={"omit_defaults": "False"}),  # (each capability written, also when false)
        # `_meta` typed: `terminal_output` and Tether's `_meta.tether` (`_capabilities_meta`)
        Cls("ClientCapabilities", "ClientCapabilities", [
            "fs", "terminal", "meta: Union[ClientCapabilitiesMeta, None, UnsetType] = UNSET",
        ], kw={"omit_defaults": "False"}, doc="ACP's client capabilities, with Tether's extensions under `_meta`."),
        # Tether reads embedded resources (upstream's default: no)
        Cls("PromptCapabilities", "PromptCapabilities", ["image", "audio", "embedded_context: bool = True"],
            kw={"omit_defaults": "False"}),
        Cls("McpCapabilities", "McpCapabilities", ["http", "sse"], kw={"omit_defaults": "False"}),
        # each session capability Tether has, written as `{}` (upstream: an object with `_meta`)
        Cls("SessionCapabilities", "SessionCapabilities", [
            f"{key}: Union[JsonObject, None] = msgspec.field(default_factory=dict)"
            for key in ("list", "resume", "close", "delete")
        ], kw={"omit_defaults": "False"}),
        # Tether loads sessions (upstream's default: no)
        Cls("AgentCapabilities", "AgentCapabilities", [
            "load_session: bool = True", "prompt_capabilities", "mcp_capabilities", "session_capabilities",
        ], kw={"omit_defaults": "False"}),
        # every key optional: an LSP client sends none of them (`_lsp_lifecycle` reads its own);
        # `clientCapabilities` may be null (read as none); `info` is v2's `clientInfo`, read here so
        # a v2 start does not load the v2 request's module (`acp_v2/initialize_request.py`)
        Cls("AcpInitializeParams", "InitializeRequest", [
            "protocol_version: Union[int, None] = None", "client_capabilities: Union[ClientCapabilities, None] = None",
            "client_info", "info: Union[Implementation, None] = None", META,
        ], doc="ACP's `initialize` params (v1; v2's `info` too)."),
        # the answer (on the start path: the handshake builds it); `agentInfo` always sent;
        # `_meta.tether` typed (`_capabilities_meta`)
        Cls("AcpInitializeResult", "InitializeResponse", [
            "protocol_version", "agent_capabilities = required", "agent_info = required",
            "auth_methods: list[JsonObject] = required", "meta: Union[InitializeResultMeta, None] = None",
        ], doc=(
            "ACP's `initialize` result; a client that also sent LSP's params gets LSP's half\n"
            "    (`LspInitializeResult`) beside it at the root, else under `_meta.tether.lsp`.")),
    ],
    # the shape only the schema needs (the peer reads cancels raw): its own area, off the start path
    "lifecycle": [
        # optional: the peer takes LSP's `id` under ACP's method too (`requestId` wins); no `_meta`
        # (Tether neither reads nor sends it)
        Cls("AcpCancelRequestParams", "CancelRequestNotification", ["request_id: Union[int, str, None] = None"],
            doc="`$/cancel_request` (ACP), both directions."),
    ],
}
# fmt: on
