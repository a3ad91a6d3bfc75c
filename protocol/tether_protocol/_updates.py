"""`session/update` (ACP v1): the notification and each update kind Tether sends (SPEC §4),
with the `_meta` keys it puts on them (`_meta.tether.*`, ACP's terminal keys).

Owns: those shapes as msgspec Structs (`_codec.Wire`, the tag `sessionUpdate` first; key order
is field order), built by `server/updates/acp_v1.py` and `replay.py`. Must not: build updates,
or hold v2's (`acp_v2.schema_types`, rendered by `server/updates/acp_v2.py`).
"""

from __future__ import annotations

from typing import Literal, Union

import msgspec
from msgspec import UNSET, UnsetType

from ._codec import Wire
from ._common import (
    ContentBlock,
    ModeId,
    PlanEntryPriority,
    PlanEntryStatus,
    TextContent,
    ToolCallContent,
    ToolCallLocation,
    ToolCallStatus,
    ToolKind,
)
from ._config_options import SessionConfigOption
from ._json import JsonObject
from ._queue import QueuedPrompt

__all__ = [
    "AgentMessageChunk", "AgentThoughtChunk", "AvailableCommand", "AvailableCommandInput",
    "AvailableCommandsUpdate", "Compaction", "MemoryHit", "MemoryRecall", "ConfigOptionUpdate", "CurrentModeUpdate",
    "MessageStatus", "Plan", "PlanEntry", "SessionInfoUpdate", "SessionNotification",
    "SessionUpdate", "TerminalExit", "TerminalInfo", "TerminalOutput", "ToolCall",
    "ToolCallUpdate", "TurnEnded", "TurnStopReason", "UpdateMeta", "UpdateTetherMeta",
    "UsageUpdate", "UserMessageChunk",
]

MessageStatus = Literal["cancelled", "incomplete", "interrupted", "error"]
TurnStopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"]


class Compaction(Wire):
    replaced: int


class TurnEnded(Wire):
    """The end of a turn resumed after a restart, which has no prompt to answer."""

    turn_id: str
    stop_reason: TurnStopReason


class MemoryHit(Wire):
    """One message of an earlier session given to the model (`sessionTitle` null when untitled)."""

    session_id: str
    session_title: Union[str, None]
    message_seq: int
    role: str
    snippet: str


class MemoryRecall(Wire):
    """What retrieved memory gave the model (`_meta.tether.memory` of its notice)."""

    tokens: int
    hits: list[MemoryHit]


class UpdateTetherMeta(Wire):
    """`_meta.tether` of an update: a notice (§4.10), a message steered into a running turn,
    where it landed (`user_message_chunk`: `steered`, `afterStep` (null before the first
    step), live also `turnId`, `messageSeq`; §3.37), a replayed message's status (§4.6), a
    compaction (§5.15), memory given to the model, a resumed turn's end (§4.4), why a call
    was allowed (§4.9), a sub-agent's call and session, the prompt queue (`session_info_update`)."""

    notice: Union[bool, None] = None
    steered: Union[bool, None] = None
    turn_id: Union[str, None] = None
    after_step: Union[int, None, UnsetType] = UNSET
    message_seq: Union[int, None] = None
    status: Union[MessageStatus, None] = None
    compaction: Union[Compaction, None] = None
    memory: Union[MemoryRecall, None] = None
    turn_ended: Union[TurnEnded, None] = None
    approved_by: Union[str, None] = None
    parent_call_id: Union[str, None] = None
    child_session_id: Union[str, None] = None
    queue: Union[list[QueuedPrompt], None] = None


# ACP's terminal keys are snake_case, as claude-agent-acp and codex-acp send them


class TerminalInfo(msgspec.Struct):
    terminal_id: str
    cwd: str


class TerminalOutput(msgspec.Struct):
    """New output to append (not the tail)."""

    terminal_id: str
    data: str


class TerminalExit(msgspec.Struct):
    """`exit_code` null and `signal` "SIGKILL" when the command was killed."""

    terminal_id: str
    exit_code: Union[int, None]
    signal: Union[str, None]


class UpdateMeta(msgspec.Struct, omit_defaults=True):
    """`_meta` of an update. The terminal keys are snake_case, as claude-agent-acp and
    codex-acp send them (only to clients that set `_meta.terminal_output`)."""

    tether: Union[UpdateTetherMeta, None] = None
    terminal_info: Union[TerminalInfo, None] = None
    terminal_output: Union[TerminalOutput, None] = None
    terminal_exit: Union[TerminalExit, None] = None


class UserMessageChunk(Wire, tag_field="sessionUpdate", tag="user_message_chunk"):
    """Replay only: one per block of a stored prompt."""

    content: ContentBlock
    meta: Union[UpdateMeta, None] = msgspec.field(default=None, name="_meta")


class AgentMessageChunk(Wire, tag_field="sessionUpdate", tag="agent_message_chunk"):
    content: TextContent
    meta: Union[UpdateMeta, None] = msgspec.field(default=None, name="_meta")


class AgentThoughtChunk(Wire, tag_field="sessionUpdate", tag="agent_thought_chunk"):
    content: TextContent
    meta: Union[UpdateMeta, None] = msgspec.field(default=None, name="_meta")


class ToolCall(Wire, tag_field="sessionUpdate", tag="tool_call", omit_defaults=False):
    """A call's first report: `kind` and `status` always written, the rest left out
    while unset (no content: none yet)."""

    tool_call_id: str
    title: str
    kind: ToolKind = "other"
    status: ToolCallStatus = "pending"
    raw_input: Union[JsonObject, None, UnsetType] = UNSET
    content: Union[list[ToolCallContent], UnsetType] = UNSET
    locations: Union[list[ToolCallLocation], UnsetType] = UNSET
    raw_output: Union[JsonObject, None, UnsetType] = UNSET
    meta: Union[UpdateMeta, None, UnsetType] = msgspec.field(default=UNSET, name="_meta")


class ToolCallUpdate(Wire, tag_field="sessionUpdate", tag="tool_call_update"):
    """A change to a tool call: fields left out are unchanged; `content` replaces."""

    tool_call_id: str
    status: Union[ToolCallStatus, None] = None
    title: Union[str, None] = None
    kind: Union[ToolKind, None] = None
    raw_input: Union[JsonObject, None] = None
    content: Union[list[ToolCallContent], None] = None
    locations: Union[list[ToolCallLocation], None] = None
    raw_output: Union[JsonObject, None] = None
    meta: Union[UpdateMeta, None] = msgspec.field(default=None, name="_meta")


class PlanEntry(Wire):
    content: str
    priority: PlanEntryPriority
    status: PlanEntryStatus


class Plan(Wire, tag_field="sessionUpdate", tag="plan"):
    """The whole plan, replacing the previous one (an empty list clears it)."""

    entries: list[PlanEntry]
    meta: Union[UpdateMeta, None] = msgspec.field(default=None, name="_meta")


class SessionInfoUpdate(Wire, tag_field="sessionUpdate", tag="session_info_update"):
    title: Union[str, None] = None
    updated_at: Union[str, None] = None
    meta: Union[UpdateMeta, None] = msgspec.field(default=None, name="_meta")


class CurrentModeUpdate(Wire, tag_field="sessionUpdate", tag="current_mode_update"):
    """Sent when the mode changes other than by the client's own `session/set_mode`
    (`session/set_config_option` on the "mode" option, the `/mode` slash command)."""

    current_mode_id: ModeId
    meta: Union[UpdateMeta, None] = msgspec.field(default=None, name="_meta")


class ConfigOptionUpdate(Wire, tag_field="sessionUpdate", tag="config_option_update"):
    """The full set of session config options, after one changed on the daemon's side."""

    config_options: list[SessionConfigOption]
    meta: Union[UpdateMeta, None] = msgspec.field(default=None, name="_meta")


class UsageUpdate(Wire, tag_field="sessionUpdate", tag="usage_update"):
    used: int
    size: int
    meta: Union[UpdateMeta, None] = msgspec.field(default=None, name="_meta")


class AvailableCommandInput(Wire):
    """Unstructured text after the command's name; `hint` is shown until it is typed."""

    hint: str


class AvailableCommand(Wire):
    """A slash command: sent as a prompt whose first text block is `/name [input]`."""

    name: str
    description: str
    input: Union[AvailableCommandInput, None] = None


class AvailableCommandsUpdate(Wire, tag_field="sessionUpdate", tag="available_commands_update"):
    """The whole list of slash commands, replacing the previous one (after
    `session/new`, after `session/load`, and when the list changes)."""

    available_commands: list[AvailableCommand]
    meta: Union[UpdateMeta, None] = msgspec.field(default=None, name="_meta")


SessionUpdate = Union[
    UserMessageChunk,
    AgentMessageChunk,
    AgentThoughtChunk,
    ToolCall,
    ToolCallUpdate,
    Plan,
    SessionInfoUpdate,
    CurrentModeUpdate,
    ConfigOptionUpdate,
    AvailableCommandsUpdate,
    UsageUpdate,
]


class SessionNotification(Wire):
    """`session/update` params."""

    session_id: str
    update: SessionUpdate
    meta: Union[JsonObject, None] = msgspec.field(default=None, name="_meta")

