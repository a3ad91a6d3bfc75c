"""`session/update`: the notification and each update kind Tether sends (SPEC §4),
with the `_meta` keys it puts on them (`_meta.tether.*` and ACP's terminal keys).

Owns: those shapes. Must not: build updates — the daemon's update layer writes them as
plain dicts (or JSON text) of exactly these shapes on the hot path, and the tests check
what it sends against the schema generated from these classes.

ACP v2 changes this surface most (updates become upserts by id, `tool_call` goes,
`state_update` arrives): a v2 set would be a sibling module with its own union, chosen
by the method table of the negotiated version (`_method_table.py`), not a change here.
"""

from __future__ import annotations

from typing import Literal, Union

import attrs

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
from ._fields import wire
from ._json import JsonObject
from ._queue import QueuedPrompt

__all__ = [
    "AgentMessageChunk", "AgentThoughtChunk", "AvailableCommand", "AvailableCommandInput",
    "AvailableCommandsUpdate", "Compaction", "ConfigOptionUpdate", "CurrentModeUpdate",
    "MessageStatus", "Plan", "PlanEntry", "SessionInfoUpdate", "SessionNotification",
    "SessionUpdate", "TerminalExit", "TerminalInfo", "TerminalOutput", "ToolCall",
    "ToolCallUpdate", "TurnEnded", "TurnStopReason", "UpdateMeta", "UpdateTetherMeta",
    "UsageUpdate", "UserMessageChunk",
]

MessageStatus = Literal["cancelled", "incomplete", "interrupted", "error"]
TurnStopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"]


@attrs.define
class Compaction:
    replaced: int


@attrs.define
class TurnEnded:
    """The end of a turn resumed after a restart, which has no prompt to answer."""

    turn_id: str
    stop_reason: TurnStopReason


@attrs.define
class UpdateTetherMeta:
    """`_meta.tether` of an update: a notice (§4.10), a replayed message's status (§4.6),
    a compaction (§5.15), a resumed turn's end (§4.4), why a call was allowed (§4.9), the
    prompt queue (`session_info_update`), a message steered into a running turn, where it
    landed (`user_message_chunk`: `steered`, `afterStep`, live also `turnId`, `messageSeq`; §3.37)."""

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


@attrs.define
class TerminalInfo:
    terminal_id: str = wire("terminal_id")
    cwd: str = wire("cwd")


@attrs.define
class TerminalOutput:
    """New output to append (not the tail)."""

    terminal_id: str = wire("terminal_id")
    data: str = wire("data")


@attrs.define
class TerminalExit:
    """`exit_code` null and `signal` "SIGKILL" when the command was killed."""

    terminal_id: str = wire("terminal_id")
    exit_code: Union[int, None] = wire("exit_code")
    signal: Union[str, None] = wire("signal")


@attrs.define
class UpdateMeta:
    """`_meta` of an update. The terminal keys are snake_case, as claude-agent-acp and
    codex-acp send them (only to clients that set `_meta.terminal_output`)."""

    tether: Union[UpdateTetherMeta, None] = None
    terminal_info: Union[TerminalInfo, None] = wire("terminal_info", default=None)
    terminal_output: Union[TerminalOutput, None] = wire("terminal_output", default=None)
    terminal_exit: Union[TerminalExit, None] = wire("terminal_exit", default=None)


@attrs.define
class UserMessageChunk:
    """Replay only: one per block of a stored prompt."""

    content: ContentBlock
    session_update: Literal["user_message_chunk"] = "user_message_chunk"
    meta: Union[UpdateMeta, None] = None


@attrs.define
class AgentMessageChunk:
    content: TextContent
    session_update: Literal["agent_message_chunk"] = "agent_message_chunk"
    meta: Union[UpdateMeta, None] = None


@attrs.define
class AgentThoughtChunk:
    content: TextContent
    session_update: Literal["agent_thought_chunk"] = "agent_thought_chunk"
    meta: Union[UpdateMeta, None] = None


@attrs.define
class ToolCall:
    tool_call_id: str
    title: str
    kind: ToolKind = "other"
    status: ToolCallStatus = "pending"
    content: list[ToolCallContent] = attrs.Factory(list)
    locations: list[ToolCallLocation] = attrs.Factory(list)
    raw_input: Union[JsonObject, None] = None
    raw_output: Union[JsonObject, None] = None
    session_update: Literal["tool_call"] = "tool_call"
    meta: Union[UpdateMeta, None] = None


@attrs.define
class ToolCallUpdate:
    """A change to a tool call: fields left out are unchanged; `content` replaces."""

    tool_call_id: str
    title: Union[str, None] = None
    kind: Union[ToolKind, None] = None
    status: Union[ToolCallStatus, None] = None
    content: Union[list[ToolCallContent], None] = None
    locations: Union[list[ToolCallLocation], None] = None
    raw_input: Union[JsonObject, None] = None
    raw_output: Union[JsonObject, None] = None
    session_update: Literal["tool_call_update"] = "tool_call_update"
    meta: Union[UpdateMeta, None] = None


@attrs.define
class PlanEntry:
    content: str
    priority: PlanEntryPriority
    status: PlanEntryStatus


@attrs.define
class Plan:
    """The whole plan, replacing the previous one (an empty list clears it)."""

    entries: list[PlanEntry]
    session_update: Literal["plan"] = "plan"
    meta: Union[UpdateMeta, None] = None


@attrs.define
class SessionInfoUpdate:
    title: Union[str, None] = None
    updated_at: Union[str, None] = None
    session_update: Literal["session_info_update"] = "session_info_update"
    meta: Union[UpdateMeta, None] = None


@attrs.define
class CurrentModeUpdate:
    """Sent when the mode changes other than by the client's own `session/set_mode`
    (`session/set_config_option` on the "mode" option, the `/mode` slash command)."""

    current_mode_id: ModeId
    session_update: Literal["current_mode_update"] = "current_mode_update"
    meta: Union[UpdateMeta, None] = None


@attrs.define
class ConfigOptionUpdate:
    """The full set of session config options, after one changed on the daemon's side."""

    config_options: list[SessionConfigOption]
    session_update: Literal["config_option_update"] = "config_option_update"
    meta: Union[UpdateMeta, None] = None


@attrs.define
class UsageUpdate:
    used: int
    size: int
    session_update: Literal["usage_update"] = "usage_update"
    meta: Union[UpdateMeta, None] = None


@attrs.define
class AvailableCommandInput:
    """Unstructured text after the command's name; `hint` is shown until it is typed."""

    hint: str


@attrs.define
class AvailableCommand:
    """A slash command: sent as a prompt whose first text block is `/name [input]`."""

    name: str
    description: str
    input: Union[AvailableCommandInput, None] = None


@attrs.define
class AvailableCommandsUpdate:
    """The whole list of slash commands, replacing the previous one (after
    `session/new`, after `session/load`, and when the list changes)."""

    available_commands: list[AvailableCommand]
    session_update: Literal["available_commands_update"] = "available_commands_update"
    meta: Union[UpdateMeta, None] = None


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


@attrs.define
class SessionNotification:
    """`session/update` params."""

    session_id: str
    update: SessionUpdate
    meta: Union[JsonObject, None] = None
