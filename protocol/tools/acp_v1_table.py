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
    doc: str | None = None
    extra: list[str] = field(default_factory=list)  # class-level lines (`ClassVar`s)


@dataclass(frozen=True)
class Alias:
    name: str
    upstream: str | None = None  # an enum: its values as a `Literal`
    text: str | None = None  # else Tether's own right-hand side
    doc: str | None = None


META = "meta"  # `_meta`: `Meta` (any object, never checked), left out while None
TYPE = {"tag_field": '"type"'}

IMPORTS = {
    "Meta": ".._codec", "NonEmpty": ".._codec", "Wire": ".._codec", "JsonObject": ".._json",
    "QueuedPrompt": ".._queue", "SteerOutcome": ".._queue", "PromptResultMeta": ".._queue",
}

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
    ],
    "content": [
        Alias("StopReason", "StopReason"),
        Alias("ToolKind", "ToolKind"),
        Alias("ToolCallStatus", "ToolCallStatus"),
        Alias("PlanEntryPriority", "PlanEntryPriority"),
        Alias("PlanEntryStatus", "PlanEntryStatus"),
        Cls("Implementation", "Implementation", ["name", "version", "title"]),
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
}
