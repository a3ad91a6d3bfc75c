"""Prompts that arrive while a turn runs: the queue and steering (SPEC §3.37).

Owns: the params and results of `_tether/session/queue|dequeue|steer`, the queue's entries
(`QueuedPrompt`, also the payload announcing a change of it) and where a steered message
landed (`SteerOutcome`, in `session/prompt`'s `_meta.tether`: `PromptTetherMeta`).
Must not: hold behaviour (the daemon's `server/queue.py` does).
"""

from __future__ import annotations

from typing import ClassVar, Literal

import msgspec

from ._codec import Meta, NonEmpty, Wire
from ._common import ContentBlock

__all__ = [
    "DequeueParams",
    "QueueParams",
    "QueueResult",
    "QueueState",
    "QueuedPrompt",
    "SteerOutcome",
    "SteerParams",
]

_REQUIRED_ID = "invalid params for {method}: sessionId (a non-empty string) is required"
_QUEUE_ID = "invalid params for {method}: queueId (a non-empty string from _tether/session/queue) is required"

QueueState = Literal["queued", "notRun"]
"""`queued`: waits for the turns before it; `notRun`: a Tether process that held it stopped
before its turn began (it is never run later: send it again to run it)."""


class QueueParams(Wire):
    WIRE_ERRORS: ClassVar[dict[str, str]] = {"sessionId": _REQUIRED_ID}

    session_id: NonEmpty
    meta: Meta = msgspec.field(default=None, name="_meta")


class QueuedPrompt(Wire, omit_defaults=False):  # `state` is written even when "queued"
    """One prompt waiting for its turn: `preview` is its text's first line (cut at 80
    characters), `queuedAt` seconds since the epoch."""

    queue_id: str
    preview: str
    queued_at: float
    state: QueueState = "queued"


class QueueResult(Wire):
    """The session's queue, oldest first: the order its turns run in."""

    queued: list[QueuedPrompt]
    meta: Meta = msgspec.field(default=None, name="_meta")


class DequeueParams(Wire):
    WIRE_ERRORS: ClassVar[dict[str, str]] = {"sessionId": _REQUIRED_ID, "queueId": _QUEUE_ID}

    session_id: NonEmpty
    queue_id: NonEmpty
    meta: Meta = msgspec.field(default=None, name="_meta")


class SteerParams(Wire):
    """`_tether/session/steer`: `session/prompt` with `_meta.tether.steer: true`."""

    session_id: str
    prompt: list[ContentBlock]
    meta: Meta = msgspec.field(default=None, name="_meta")


class SteerOutcome(Wire):
    """Where a steered message went. `landed`: it joined the running turn `turnId` after
    its step `step` (the model saw it on step `step + 1`), stored as message `messageSeq`.
    Not landed: that turn ended first, so the message ran as a turn of its own (this
    answer's `stopReason` is that turn's)."""

    landed: bool
    turn_id: str | None = None
    step: int | None = None
    message_seq: int | None = None


class PromptTetherMeta(Wire):
    """`steer`: where a message sent with `_meta.tether.steer: true` went (SPEC §3.37).
    `turnSeq`: the same turn's seq (1 = the session's first), which rewind and changes
    also take (SPEC §3.40)."""

    turn_id: str
    steer: SteerOutcome | None = None
    turn_seq: int | None = None


# `session/prompt`'s `_meta` (the answer's class is generated, `acp_v1/prompt.py`; these are
# exported by `_sessions` with it)
class PromptResultMeta(Wire):
    tether: PromptTetherMeta | None = None
