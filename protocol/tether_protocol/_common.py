"""Shapes shared by many messages (ACP v1): content blocks, tool call content and
locations, modes, and the enumerations.

Owns: those classes and the `Literal` aliases (`StopReason`, `ToolKind`, ...); the modes
are `_modes`'s (re-exported here), so `session/new` builds them alone. Field
names are snake_case here and camelCase on the wire (`_fields.py`). Must not: hold
behaviour, or name a method (the method table is `_method_table.py`).
"""

from __future__ import annotations

from typing import Literal, Union

import attrs

from ._fields import Meta
from ._modes import ModeId, SessionMode, SessionModeState  # (re-exported: the modes have their own module)

__all__ = [
    "ContentBlock", "DiffContent", "EmbeddedResource", "Implementation", "ModeId",
    "PlanEntryPriority", "PlanEntryStatus", "ResourceLink", "SessionMode",
    "SessionModeState", "StopReason", "TerminalContent", "TextContent", "TextResource",
    "ToolCallContent", "ToolCallContentBlock", "ToolCallLocation", "ToolCallStatus",
    "ToolKind",
]

StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]
ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
ToolCallStatus = Literal["pending", "in_progress", "completed", "failed"]
PlanEntryPriority = Literal["high", "medium", "low"]
PlanEntryStatus = Literal["pending", "in_progress", "completed"]


@attrs.define
class Implementation:
    name: str
    version: str
    title: Union[str, None] = None


# ---- content blocks (prompts, message chunks) --------------------------------------


@attrs.define
class TextContent:
    type: Literal["text"] = attrs.field(default="text", kw_only=True)  # first on the wire
    text: str
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


# ---- tool calls ----------------------------------------------------------------------


@attrs.define
class ToolCallLocation:
    path: str
    line: Union[int, None] = None


@attrs.define
class ToolCallContentBlock:
    """`{"type": "content", "content": <ContentBlock>}` inside a tool call."""

    type: Literal["content"] = attrs.field(default="content", kw_only=True)
    content: TextContent


@attrs.define
class DiffContent:
    """`{"type": "diff", path, oldText?, newText}`: whole file texts (SPEC §3.22).

    `path` is absolute (for a move, the destination); `oldText` is absent for a new
    file; `newText` is `""` for a deletion."""

    type: Literal["diff"] = attrs.field(default="diff", kw_only=True)
    path: str
    new_text: str
    old_text: Union[str, None] = None


@attrs.define
class TerminalContent:
    """`{"type": "terminal", terminalId}`: command output shown as a terminal (only for
    clients that set `clientCapabilities._meta.terminal_output`, SPEC §4.9)."""

    type: Literal["terminal"] = attrs.field(default="terminal", kw_only=True)
    terminal_id: str


ToolCallContent = Union[ToolCallContentBlock, DiffContent, TerminalContent]
