"""A turn's checkpoint of the calls left waiting for approval (restart-safe approvals).

Owns: ``PendingStep``/``PendingCallRecord`` and their one JSON form (a turn's row, a snapshot's
``turns[].pending``; written as before, errors naming the field: docs/decisions/0017).
Must not: touch a store, know the agent loop, or import the conversation model at module
level (the store imports this on the start path).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._json import JsonObject, type_name  # the edge: a call's arguments are the model's JSON

__all__ = ["CheckpointError", "PendingCallRecord", "PendingStep"]

# A step is numbered from 1; the bound keeps it a JSON-safe integer (as a snapshot's seqs)
_MAX_STEP = 2**53 - 1


class CheckpointError(ValueError):
    """A stored checkpoint that cannot be resumed; the message is the path and why
    (``.calls must be a list of the calls still to run, not a string``)."""


def _empty() -> JsonObject:
    return {}


@dataclass(frozen=True, slots=True)
class PendingCallRecord:
    """One call of the step still to run; ``started``: it was approved and began changing
    things, so it may have run (never run again unasked)."""

    id: str
    name: str
    arguments: JsonObject = field(default_factory=_empty)
    started: bool = False

    def to_json(self) -> JsonObject:
        body: JsonObject = {"id": self.id, "name": self.name, "arguments": self.arguments}
        if self.started:
            body["started"] = True
        return body


@dataclass(frozen=True, slots=True)
class PendingStep:
    """The checkpointed step (its index in the turn) and its calls still to run."""

    step: int
    calls: tuple[PendingCallRecord, ...] = ()

    def call_ids(self) -> set[str]:
        return {c.id for c in self.calls}

    def to_json(self) -> JsonObject:
        """The stored form (the same bytes the untyped checkpoint had, once encoded)."""
        return {"step": self.step, "calls": [c.to_json() for c in self.calls]}

    @classmethod
    def from_json(cls, data: Any) -> PendingStep:
        """The checkpoint of a stored ``{step, calls}`` (``step`` defaults to 1);
        ``CheckpointError`` naming the first wrong field otherwise."""
        if type(data) is not dict:
            raise CheckpointError(f" must be an object {{step, calls}}, not {type_name(data)}")
        step = data.get("step", 1)
        if type(step) is not int or not 1 <= step <= _MAX_STEP:
            raise CheckpointError(f".step must be an integer from 1, not {step!r}")
        calls = data.get("calls")
        if type(calls) is not list:
            raise CheckpointError(f".calls must be a list of the calls still to run, not {type_name(calls)}")
        return cls(step, tuple([_call(call, i) for i, call in enumerate(calls)]))


def _call(data: Any, index: int) -> PendingCallRecord:
    from ._conversation_blocks import ConversationError
    from ._conversation_codec import tool_call_from_json

    where = f".calls[{index}]"
    try:
        call = tool_call_from_json(data, where)
    except ConversationError as exc:
        raise CheckpointError(str(exc)) from None
    started = data.get("started", False)
    if type(started) is not bool:
        raise CheckpointError(f"{where}.started must be a boolean, not {type_name(started)}")
    return PendingCallRecord(call.id, call.name, call.arguments, started)
