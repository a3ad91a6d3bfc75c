"""Shapes shared by many messages (ACP v1): content blocks, tool call content and locations.

Owns: naming them for Tether: the Structs and `Literal` aliases (`StopReason`, `ToolKind`, ...)
are generated (`acp_v1/content.py`); the modes are `_modes`'s, re-exported here.
Must not: hold behaviour or name a method (the method table is `_method_table.py`).
"""

from __future__ import annotations

from ._modes import ModeId, SessionMode, SessionModeState  # (re-exported: the modes have their own module)
from .acp_v1.content import (
    ContentBlock,
    DiffContent,
    EmbeddedResource,
    Implementation,
    PlanEntryPriority,
    PlanEntryStatus,
    ResourceLink,
    StopReason,
    TerminalContent,
    TextContent,
    TextResource,
    ToolCallContent,
    ToolCallContentBlock,
    ToolCallLocation,
    ToolCallStatus,
    ToolKind,
)

__all__ = [
    "ContentBlock",
    "DiffContent",
    "EmbeddedResource",
    "Implementation",
    "ModeId",
    "PlanEntryPriority",
    "PlanEntryStatus",
    "ResourceLink",
    "SessionMode",
    "SessionModeState",
    "StopReason",
    "TerminalContent",
    "TextContent",
    "TextResource",
    "ToolCallContent",
    "ToolCallContentBlock",
    "ToolCallLocation",
    "ToolCallStatus",
    "ToolKind",
]
