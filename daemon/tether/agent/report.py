"""The run report of a turn (seed 004's AgentRunReport): steps, latencies, usage, tools."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from .state import StepState


@dataclass(slots=True)
class ToolTiming:
    call_id: str
    tool_name: str
    arguments: dict[str, Any]
    result_size_bytes: int
    latency_ms: float
    error: str | None


@dataclass(slots=True)
class RunReportBuilder:
    turn_id: str
    session_id: str
    provider: str
    model: str
    started_at: float = field(default_factory=time.time)
    _t0: float = field(default_factory=time.perf_counter)
    steps: list[dict[str, Any]] = field(default_factory=list)

    def add_step(self, state: StepState, tools: list[ToolTiming], tool_ms: float) -> None:
        self.steps.append(
            {
                "index": state.index,
                "llmLatencyMs": round((state.llm_done - state.started) * 1000, 3),
                "firstTokenMs": (
                    round((state.first_token - state.started) * 1000, 3)
                    if state.first_token is not None
                    else None
                ),
                "usage": {
                    "inputTokens": state.input_tokens,
                    "outputTokens": state.output_tokens,
                    "cachedTokens": state.cached_tokens,
                    "cacheWriteTokens": state.cache_write_tokens,
                },
                "finishReason": state.finish_reason,
                "toolCalls": [
                    {
                        "callId": t.call_id,
                        "toolName": t.tool_name,
                        "arguments": t.arguments,
                        "resultSizeBytes": t.result_size_bytes,
                        "latencyMs": round(t.latency_ms, 3),
                        **({"error": t.error} if t.error else {}),
                    }
                    for t in tools
                ],
                "toolTotalMs": round(tool_ms, 3),
            }
        )

    def build(self, *, stop_reason: str, status: str, error: str | None = None) -> dict[str, Any]:
        usage = {"inputTokens": 0, "outputTokens": 0, "cachedTokens": 0, "cacheWriteTokens": 0}
        for step in self.steps:
            for key in usage:
                usage[key] += step["usage"][key]
        report: dict[str, Any] = {
            "turnId": self.turn_id,
            "sessionId": self.session_id,
            "provider": self.provider,
            "model": self.model,
            "startedAt": self.started_at,
            "completedAt": time.time(),
            "totalMs": round((time.perf_counter() - self._t0) * 1000, 3),
            "stopReason": stop_reason,
            "status": status,
            "steps": self.steps,
            "stepCount": len(self.steps),
            "toolCallCount": sum(len(s["toolCalls"]) for s in self.steps),
            "totalUsage": usage,
            "totalLlmMs": round(sum(s["llmLatencyMs"] for s in self.steps), 3),
            "totalToolMs": round(sum(s["toolTotalMs"] for s in self.steps), 3),
        }
        if error:
            report["error"] = error
        return report
