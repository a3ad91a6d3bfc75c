"""Tether's `_meta` on `session/update` (SPEC §4): `_meta.tether.*` and ACP's terminal keys.

Owns: those shapes, hand-declared (Tether's extension; the updates themselves are generated,
`acp_v1/updates.py`, and type their `_meta` as `UpdateMeta`). Must not: build updates or
name an update kind (`_updates` names them for Tether).
"""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET, UnsetType

from ._codec import Wire
from ._queue import QueuedPrompt

__all__ = [
    "Compaction",
    "MemoryHit",
    "MemoryRecall",
    "MessageStatus",
    "TerminalExit",
    "TerminalInfo",
    "TerminalOutput",
    "TurnEnded",
    "TurnStopReason",
    "UpdateMeta",
    "UpdateTetherMeta",
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
    session_title: str | None
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

    notice: bool | None = None
    steered: bool | None = None
    turn_id: str | None = None
    after_step: int | UnsetType | None = UNSET
    message_seq: int | None = None
    status: MessageStatus | None = None
    compaction: Compaction | None = None
    memory: MemoryRecall | None = None
    turn_ended: TurnEnded | None = None
    approved_by: str | None = None
    parent_call_id: str | None = None
    child_session_id: str | None = None
    queue: list[QueuedPrompt] | None = None


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
    exit_code: int | None
    signal: str | None


class UpdateMeta(msgspec.Struct, omit_defaults=True):
    """`_meta` of an update. The terminal keys are snake_case, as claude-agent-acp and
    codex-acp send them (only to clients that set `_meta.terminal_output`)."""

    tether: UpdateTetherMeta | None = None
    terminal_info: TerminalInfo | None = None
    terminal_output: TerminalOutput | None = None
    terminal_exit: TerminalExit | None = None
