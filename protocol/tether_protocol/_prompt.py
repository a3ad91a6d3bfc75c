"""ACP's `session/prompt` params and result (SPEC §3.8).

Owns: `PromptParams`, `PromptResult` and its `_meta`, msgspec Structs (re-exported by `_sessions`
on first use; their own module keeps content blocks off the start path: docs/decisions/0017).
Must not: hold behaviour.
"""

from __future__ import annotations

from typing import Union

import msgspec

from ._codec import Meta, Wire
from ._common import ContentBlock, StopReason
from ._queue import SteerOutcome

__all__ = ["PromptParams", "PromptResult", "PromptResultMeta", "PromptTetherMeta"]


# ---- prompt turn ---------------------------------------------------------------------


class PromptParams(Wire):
    session_id: str
    prompt: list[ContentBlock]
    meta: Meta = msgspec.field(default=None, name="_meta")
    # at most one insertion per (session, key): a retry gets the first's answer (SPEC §12.5)
    idempotency_key: Union[str, None] = None


class PromptTetherMeta(Wire):
    """`steer`: where a message sent with `_meta.tether.steer: true` went (SPEC §3.37).
    `turnSeq`: the same turn's seq (1 = the session's first), which rewind and changes
    also take (SPEC §3.40)."""

    turn_id: str
    steer: Union[SteerOutcome, None] = None
    turn_seq: Union[int, None] = None


class PromptResultMeta(Wire):
    tether: Union[PromptTetherMeta, None] = None


class PromptResult(Wire):
    """`_meta.tether.turnId` names the turn's run report (`_tether/session/report`)."""

    stop_reason: StopReason
    meta: Union[PromptResultMeta, None] = msgspec.field(default=None, name="_meta")
