"""Shapes shared by many messages (ACP v1): content blocks, tool call content and locations.

Owns: those msgspec Structs (`_codec.Wire`: camelCase, the tag first) and the `Literal` aliases
(`StopReason`, `ToolKind`, ...); the modes are `_modes`'s, re-exported here.
Must not: hold behaviour or name a method (the method table is `_method_table.py`).
"""

from __future__ import annotations

from typing import Literal, Union

import msgspec

from ._codec import Meta, Wire
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


class Implementation(Wire):
    name: str
    version: str
    title: Union[str, None] = None


# ---- content blocks (prompts, message chunks) --------------------------------------


class TextContent(Wire, tag_field="type", tag="text"):
    text: str
    meta: Meta = msgspec.field(default=None, name="_meta")


class ResourceLink(Wire, tag_field="type", tag="resource_link"):
    uri: str
    name: str
    mime_type: Union[str, None] = None
    meta: Meta = msgspec.field(default=None, name="_meta")


class TextResource(Wire):
    uri: str
    text: str
    mime_type: Union[str, None] = None


class EmbeddedResource(Wire, tag_field="type", tag="resource"):
    resource: TextResource
    meta: Meta = msgspec.field(default=None, name="_meta")


ContentBlock = Union[TextContent, ResourceLink, EmbeddedResource]


# ---- tool calls ----------------------------------------------------------------------


class ToolCallLocation(Wire):
    path: str
    line: Union[int, None] = None


class ToolCallContentBlock(Wire, tag_field="type", tag="content"):
    """`{"type": "content", "content": <ContentBlock>}` inside a tool call."""

    content: TextContent


class DiffContent(Wire, tag_field="type", tag="diff"):
    """`{"type": "diff", path, oldText?, newText}`: whole file texts (SPEC §3.22).

    `path` is absolute (for a move, the destination); `oldText` is absent for a new
    file; `newText` is `""` for a deletion."""

    path: str
    new_text: str
    old_text: Union[str, None] = None


class TerminalContent(Wire, tag_field="type", tag="terminal"):
    """`{"type": "terminal", terminalId}`: command output shown as a terminal (only for
    clients that set `clientCapabilities._meta.terminal_output`, SPEC §4.9)."""

    terminal_id: str


ToolCallContent = Union[ToolCallContentBlock, DiffContent, TerminalContent]
