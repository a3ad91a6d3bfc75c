"""Firing a stage: every matching hook in order, their answers combined, each action shown.

Owns: the event each hook gets on stdin (Tether's keys and Claude Code's), combining answers (deny > ask >
modify > allow; contexts joined), a broken permission-stage hook counting as "ask", and the notices.
Must not: apply a decision (the executor, the gate and the loop do) or raise for anything a hook did.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tether_protocol import JsonObject

from ..agent.sink import Notice, TurnSink
from .answers import HookAnswer, read_answer
from .config import STAGE_TO_CLAUDE, HookSet
from .runner import HookPlace, run_hook

__all__ = ["HookOutcome", "Hooks"]

# a broken hook at these stages means "ask the user"
_PERMISSION_STAGES = frozenset({"pre_tool", "permission_request"})
_RANK = {"deny": 3, "ask": 2, "modify": 1, "allow": 0}


@dataclass(slots=True)
class HookOutcome:
    decision: str | None = None  # deny | ask | modify | allow; None: no hook had an opinion
    reason: str = ""
    by: str = ""  # "hook <name>": who decided
    arguments: JsonObject | None = None
    contexts: list[str] = field(default_factory=list)

    def context_text(self) -> str:
        return "\n\n".join(self.contexts)


class Hooks:
    """The configured hooks of one turn, and where they run and report."""

    def __init__(self, hooks: HookSet, place: HookPlace, sink: TurnSink, session_id: str, turn_id: str) -> None:
        self.hooks, self.place, self.sink = hooks, place, sink
        self.session_id, self.turn_id = session_id, turn_id

    def wants(self, stage: str, tool: str | None = None, arguments: Mapping[str, Any] | None = None) -> bool:
        return bool(self.hooks.for_stage(stage, tool, arguments))

    async def fire(
        self, stage: str, *, tool: str | None = None, arguments: Mapping[str, Any] | None = None, **fields: Any
    ) -> HookOutcome:
        outcome = HookOutcome()
        for spec in self.hooks.for_stage(stage, tool, arguments):
            event = self._event(stage, tool, outcome.arguments or arguments, fields)
            answer = read_answer(await run_hook(spec.command, event, spec.timeout, self.place))
            label = f"hook {spec.name} ({stage})"
            if answer.problem:
                answer = self._broken(stage, label, answer.problem)
            elif answer.decision is not None or answer.context:
                self._show(label, answer)
            _combine(outcome, answer, f"hook {spec.name}")
            if outcome.decision == "deny":
                break  # the first deny decides; later hooks are not run
        return outcome

    def _event(self, stage: str, tool: str | None, arguments: Mapping[str, Any] | None, fields: Mapping[str, Any]) -> bytes:
        event: JsonObject = {
            "stage": stage,
            "session": self.session_id,
            "turn": self.turn_id,
            "cwd": str(self.place.workspace),
            # Claude Code's names for the same things
            "hook_event_name": STAGE_TO_CLAUDE[stage],
            "session_id": self.session_id,
        }
        if tool is not None:
            event.update(tool=tool, arguments=dict(arguments or {}), tool_name=tool, tool_input=dict(arguments or {}))
        event.update(fields)
        if "result" in fields:
            event["tool_response"] = fields["result"]
        return json.dumps(event, default=str).encode("utf-8")

    def _broken(self, stage: str, label: str, problem: str) -> HookAnswer:
        if stage in _PERMISSION_STAGES:
            self.sink.emit(Notice(f"\n[{label} {problem}; the user is asked instead]\n"))
            return HookAnswer("ask", f"{label} {problem}")
        self.sink.emit(Notice(f"\n[{label} {problem}; ignored]\n"))
        return HookAnswer()

    def _show(self, label: str, answer: HookAnswer) -> None:
        said = {"allow": "allowed it", "deny": "denied it", "ask": "asked for the user's approval",
                "modify": "changed the arguments"}.get(answer.decision or "", "")
        parts = [p for p in (said, f"reason: {answer.reason}" if answer.reason else "",
                             "added context for the model" if answer.context else "") if p]
        self.sink.emit(Notice(f"\n[{label}: {'; '.join(parts)}]\n"))


def _combine(outcome: HookOutcome, answer: HookAnswer, by: str) -> None:
    if answer.context:
        outcome.contexts.append(answer.context)
    if answer.decision is None:
        return
    if answer.decision == "modify":
        outcome.arguments = answer.arguments
    if outcome.decision is None or _RANK[answer.decision] > _RANK[outcome.decision]:
        outcome.decision, outcome.reason, outcome.by = answer.decision, answer.reason, by
