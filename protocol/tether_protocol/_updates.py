"""`session/update` (ACP v1): the notification and each update kind Tether sends (SPEC §4),
with the `_meta` keys it puts on them (`_meta.tether.*`, ACP's terminal keys).

Owns: naming them for Tether: the updates are generated (`acp_v1/updates.py`; the tag
`sessionUpdate` first, key order is field order), their `_meta` is `_update_meta`'s. Built by
`server/updates/acp_v1.py` and `replay.py`. Must not: build updates, or hold v2's (`acp_v2`).
"""

from __future__ import annotations

from ._update_meta import (
    Compaction,
    MemoryHit,
    MemoryRecall,
    MessageStatus,
    TerminalExit,
    TerminalInfo,
    TerminalOutput,
    TurnEnded,
    TurnStopReason,
    UpdateMeta,
    UpdateTetherMeta,
)
from .acp_v1.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    Plan,
    PlanEntry,
    SessionInfoUpdate,
    SessionNotification,
    SessionUpdate,
    ToolCall,
    ToolCallUpdate,
    UsageUpdate,
    UserMessageChunk,
)

__all__ = [
    "AgentMessageChunk",
    "AgentThoughtChunk",
    "AvailableCommand",
    "AvailableCommandInput",
    "AvailableCommandsUpdate",
    "Compaction",
    "ConfigOptionUpdate",
    "CurrentModeUpdate",
    "MemoryHit",
    "MemoryRecall",
    "MessageStatus",
    "Plan",
    "PlanEntry",
    "SessionInfoUpdate",
    "SessionNotification",
    "SessionUpdate",
    "TerminalExit",
    "TerminalInfo",
    "TerminalOutput",
    "ToolCall",
    "ToolCallUpdate",
    "TurnEnded",
    "TurnStopReason",
    "UpdateMeta",
    "UpdateTetherMeta",
    "UsageUpdate",
    "UserMessageChunk",
]
