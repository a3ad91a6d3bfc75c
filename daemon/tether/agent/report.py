"""The run report of a turn (seed 004's AgentRunReport): steps, latencies, usage, tools.

Owns: collecting a turn's steps as typed values and building `tether_protocol`'s `RunReport`.
Must not: time anything itself beyond the turn's start and end (the loop measures steps
and tools), store the report or render it as JSON.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import tether_protocol as wire
from tether_protocol import JsonObject, RunReport, ToolCallReport, Usage

if TYPE_CHECKING:
    from .state import StepState


@dataclass(slots=True)
class ToolTiming:
    call_id: str
    tool_name: str
    arguments: JsonObject  # the call's arguments as the model sent them (JSON)
    result_size_bytes: int
    latency_ms: float
    error: str | None
    approved_by: str | None = None  # the approval's reason, for a call that changed things


@dataclass(slots=True)
class StepUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0

    def add(self, other: StepUsage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cached_tokens += other.cached_tokens
        self.cache_write_tokens += other.cache_write_tokens

    def typed(self) -> Usage:
        return Usage(self.input_tokens, self.output_tokens, self.cached_tokens, self.cache_write_tokens)


@dataclass(slots=True)
class StepReport:
    index: int
    llm_latency_ms: float
    first_token_ms: float | None
    usage: StepUsage
    finish_reason: str | None
    tools: list[ToolTiming]
    tool_total_ms: float

    def typed(self) -> wire.StepReport:
        calls = [
            ToolCallReport(
                t.call_id,
                t.tool_name,
                t.arguments,
                t.result_size_bytes,
                round(t.latency_ms, 3),
                t.error or None,
                t.approved_by,
            )
            for t in self.tools
        ]
        return wire.StepReport(
            self.index,
            self.llm_latency_ms,
            self.first_token_ms,
            self.usage.typed(),
            self.finish_reason,
            calls,
            self.tool_total_ms,
        )


@dataclass(frozen=True, slots=True)
class TurnHeader:
    """Who ran the turn, and when it started (wall clock, and the monotonic clock it is timed by)."""

    turn_id: str
    session_id: str
    provider: str
    model: str
    started_at: float
    t0: float


@dataclass(slots=True)
class RunReportBuilder:
    """Collects a turn's steps; ``report`` is the turn's ``RunReport``. A session's turns share
    one: the steps are kept for the turn that added them, so steps a turn left (one that
    ended without taking its report) are dropped by the next turn's first."""

    turn_id: str = ""  # the turn the steps are of
    steps: list[StepReport] = field(default_factory=list)

    def add_step(self, turn_id: str, state: StepState, tools: list[ToolTiming], tool_ms: float) -> None:
        if turn_id != self.turn_id:
            self.turn_id, self.steps = turn_id, []
        first = state.first_token
        self.steps.append(
            StepReport(
                index=state.index,
                llm_latency_ms=round((state.llm_done - state.started) * 1000, 3),
                first_token_ms=round((first - state.started) * 1000, 3) if first is not None else None,
                usage=StepUsage(state.input_tokens, state.output_tokens, state.cached_tokens, state.cache_write_tokens),
                finish_reason=state.finish_reason,
                tools=list(tools),
                tool_total_ms=round(tool_ms, 3),
            )
        )

    def report(self, turn: TurnHeader, *, stop_reason: str, status: str, error: str | None = None) -> RunReport:
        """The turn's report; its steps are taken (the next turn starts with none)."""
        steps = self.steps if self.turn_id == turn.turn_id else []
        self.turn_id, self.steps = "", []
        usage = StepUsage()
        for step in steps:
            usage.add(step.usage)
        return RunReport(
            turn_id=turn.turn_id,
            session_id=turn.session_id,
            provider=turn.provider,
            model=turn.model,
            started_at=turn.started_at,
            completed_at=time.time(),
            total_ms=round((time.perf_counter() - turn.t0) * 1000, 3),
            stop_reason=stop_reason,
            status=status,
            steps=[step.typed() for step in steps],
            step_count=len(steps),
            tool_call_count=sum(len(s.tools) for s in steps),
            total_usage=usage.typed(),
            total_llm_ms=round(sum(s.llm_latency_ms for s in steps), 3),
            total_tool_ms=round(sum(s.tool_total_ms for s in steps), 3),
            error=error or None,
        )
