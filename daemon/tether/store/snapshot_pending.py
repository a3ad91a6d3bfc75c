"""A restored snapshot's waiting turns checked against the conversation it restores.

Owns: ``WaitingCalls``: the calls a kept turn's ``pending`` says are still to run must be tool calls
its model made (same id, name and arguments, in that turn's assistant messages) with no result yet
(anywhere: a result filed under no turn, or another, still answers it); made-up calls are refused.
Must not: touch a store, or check a record's own fields (``snapshot_checks`` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .snapshot_checks import SnapshotError

if TYPE_CHECKING:
    from tether_protocol import JsonObject

__all__ = ["WaitingCalls"]


class WaitingCalls:
    """The pending calls of the turns that keep them, and the calls and results their messages hold."""

    def __init__(self) -> None:
        self._pending: dict[str, tuple[int, list[JsonObject]]] = {}  # turn id -> (its index, calls)
        self._made: dict[str, dict[str, tuple[Any, Any]]] = {}  # turn id -> call id -> (name, arguments)
        # the pending calls' ids: the turns whose messages hold a result of one, and those that made one
        self._results: dict[str, set[str | None]] = {}
        self._makers: dict[str, set[str]] = {}

    def add_turn(self, turn: JsonObject, index: int) -> None:
        """``turns[index]``, a checked turn whose ``pending`` is kept."""
        self._pending[turn["id"]] = (index, turn["pending"]["calls"])
        self._made[turn["id"]] = {}
        for call in turn["pending"]["calls"]:
            self._results[call["id"]], self._makers[call["id"]] = set(), set()

    def see(self, message: JsonObject) -> None:
        """A checked message (its body too): its calls or result, when they are a pending call's."""
        if not self._results:  # (most snapshots: no waiting turn)
            return
        body, turn_id = message["body"], message["turn_id"]
        if body.get("role") == "assistant":
            made = self._made.get(turn_id)
            for call in body.get("tool_calls", ()):
                if made is not None:
                    made[call["id"]] = (call["name"], call.get("arguments", {}))
                if call["id"] in self._makers:
                    self._makers[call["id"]].add(turn_id)
        elif body.get("role") == "tool" and body["tool_call_id"] in self._results:
            self._results[body["tool_call_id"]].add(turn_id)

    def check(self) -> None:
        """After the last message: SnapshotError naming the first pending call the model never made."""
        for turn_id, (index, calls) in self._pending.items():
            for i, call in enumerate(calls):
                problem = self._problem(turn_id, call)
                if problem is not None:
                    raise SnapshotError(
                        f"turns[{index}].pending.calls[{i}]: call {call['id']!r} ({call['name']}) {problem}; "
                        f"a waiting turn resumes only the calls its model made"
                    )

    def _problem(self, turn_id: str, call: JsonObject) -> str | None:
        made = self._made[turn_id].get(call["id"])
        if made is None:
            return f"is not a tool call of the model in turn {turn_id!r}'s messages"
        if made != (call["name"], call.get("arguments", {})):
            return f"differs from the model's call of that id in turn {turn_id!r} (its name or arguments)"
        # a result answers it unless another turn's own call of that id explains it (ids a model reused)
        elsewhere = self._makers[call["id"]] - {turn_id}
        if any(found not in elsewhere for found in self._results[call["id"]]):
            return f"already has a result in turn {turn_id!r}'s messages"
        return None
