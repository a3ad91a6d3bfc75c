"""A turn's checkpoint of the calls left waiting for approval (restart-safe approvals).

Owns: the Structs ``PendingApprovals``/``PendingCall``, the checkpoint's one description (a
turn's row, a snapshot's ``turns[].pending``, the schema) and its reader and writer (written as
before; errors name the field: docs/decisions/0017). Must not: touch a store or know the agent
loop (the store imports this when it reads a waiting turn).
"""

from __future__ import annotations

from typing import Annotated, Any, get_origin

import msgspec

from ._codec import Stored
from ._json import JsonObject, type_name

__all__ = ["CheckpointError", "PendingApprovals", "PendingCall"]

# A step is numbered from 1; the bound keeps it a JSON-safe integer (as a snapshot's seqs)
_MAX_STEP = 2**53 - 1


class CheckpointError(ValueError):
    """A stored checkpoint that cannot be resumed; the message is the path and why
    (``.calls must be a list of the calls still to run, not a string``)."""


class PendingCall(Stored):
    """One call of the step still to run; `started`: approved and begun before the daemon
    stopped, so it may have run (never run again unasked)."""

    id: str
    name: str
    arguments: JsonObject = msgspec.field(default_factory=dict)
    started: bool = False

    def to_json(self) -> JsonObject:
        # (by hand: `arguments` is written even when empty, as every Tether wrote it)
        body: JsonObject = {"id": self.id, "name": self.name, "arguments": self.arguments}
        if self.started:
            body["started"] = True
        return body


class PendingApprovals(Stored, kw_only=True, omit_defaults=False):
    """The checkpointed step (its index in the turn, 1 when left out) and its calls still to run."""

    # (made by keyword: a default, the step, comes before the required calls)
    step: Annotated[int, msgspec.Meta(ge=1, le=_MAX_STEP)] = 1
    calls: list[PendingCall]

    def call_ids(self) -> set[str]:
        return {c.id for c in self.calls}

    def to_json(self) -> JsonObject:
        """The stored form (the same bytes the untyped checkpoint had, once encoded)."""
        return {"step": self.step, "calls": [c.to_json() for c in self.calls]}

    @classmethod
    def from_json(cls, data: Any) -> PendingApprovals:
        """The checkpoint of a stored ``{step, calls}`` (other keys ignored), as the Structs
        read it; ``CheckpointError`` naming the first wrong field otherwise."""
        try:
            return msgspec.convert(data, cls)
        except msgspec.ValidationError as exc:
            raise CheckpointError(_first_wrong(data) or f": {exc}") from None


# ---- what a refused checkpoint is told: the Structs decided; these only word it -------------

_KINDS = {str: "a string", bool: "a boolean", dict: "an object"}


def _first_wrong(data: Any) -> str | None:
    if type(data) is not dict:
        return f" must be an object {{step, calls}}, not {type_name(data)}"
    if not _fits(data, "step", PendingApprovals):
        return f".step must be an integer from 1, not {data['step']!r}"
    calls = data.get("calls")
    if type(calls) is not list:
        return f".calls must be a list of the calls still to run, not {type_name(calls)}"
    for i, call in enumerate(calls):
        if type(call) is not dict:
            return f".calls[{i}] must be an object {{id, name, arguments}}, not {type_name(call)}"
        for field in msgspec.structs.fields(PendingCall):
            if field.name not in call and field.required:
                return f".calls[{i}].{field.name} is missing"
            if not _fits(call, field.name, PendingCall):
                kind = _KINDS[get_origin(field.type) or field.type]
                return f".calls[{i}].{field.name} must be {kind}, not {type_name(call[field.name])}"
    return None


def _fits(record: JsonObject, name: str, cls: type[msgspec.Struct]) -> bool:
    """``record[name]`` (when there) is what ``cls`` declares for that field."""
    if name not in record:
        return True
    field = next(f for f in msgspec.structs.fields(cls) if f.name == name)
    try:
        msgspec.convert(record[name], field.type)
    except msgspec.ValidationError:
        return False
    return True
