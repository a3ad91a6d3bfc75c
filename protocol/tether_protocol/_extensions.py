"""Tether's extension methods about runs and rules: `_tether/session/report`,
`_tether/daemon/stats`, `_tether/rules/list`, `_tether/rules/remove` (SPEC §3.16-§3.19).

Owns: their params and results (`initialize`'s answer's `_meta.tether` is `_capabilities_meta`'s:
the start path builds it). Must not: hold behaviour. Fields the daemon always
sends are required even when they may be null (`firstTokenMs`, `framing`, a rule's `id`).
"""

from __future__ import annotations

from typing import ClassVar, Literal

import msgspec

from ._codec import Meta, Wire
from ._json import JsonObject

__all__ = [
    "DaemonStats",
    "RemoveRuleParams",
    "ReportParams",
    "ReportResult",
    "Rule",
    "RuleDecision",
    "RuleKind",
    "RulesParams",
    "RulesResult",
    "RunReport",
    "StepReport",
    "ToolCallReport",
    "Usage",
]

_RULES_SESSION = "invalid params for {method}: sessionId (a string from session/new) is required"


class ReportParams(Wire):
    """`_tether/session/report`: run reports of a session, or of one turn."""

    session_id: str
    turn_id: str | None = None
    meta: Meta = msgspec.field(default=None, name="_meta")


class Usage(Wire, omit_defaults=False):  # every count written, 0 too
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0


class ToolCallReport(Wire):
    call_id: str
    tool_name: str
    arguments: JsonObject
    result_size_bytes: int
    latency_ms: float
    error: str | None = None
    # who let a call that changes things run, and why ("allowed by the reviewer: ...")
    approved_by: str | None = None


class StepReport(Wire):
    index: int
    llm_latency_ms: float
    first_token_ms: float | None
    usage: Usage
    finish_reason: str | None  # null when the stream ended without saying why
    tool_calls: list[ToolCallReport]
    tool_total_ms: float


class RunReport(Wire):
    turn_id: str
    session_id: str
    provider: str
    model: str
    started_at: float
    completed_at: float
    total_ms: float
    stop_reason: str
    status: str
    steps: list[StepReport]
    step_count: int
    tool_call_count: int
    total_usage: Usage
    total_llm_ms: float
    total_tool_ms: float
    error: str | None = None


class ReportResult(Wire):
    reports: list[RunReport]


class DaemonStats(Wire, omit_defaults=False):  # a 0 is written, as a null `openFds`
    """`_tether/daemon/stats`: the daemon's own counters, for health checks."""

    version: str
    running_requests: int
    background_tasks: int
    outgoing_requests: int
    unknown_responses: int
    live_sessions: int
    frames_written: int
    writes: int
    framing: Literal["lsp", "ndjson"] | None
    max_rss_kb: int
    # what a long-running daemon must not accumulate (issue 31): asyncio tasks, threads,
    # open file descriptors (null without /proc), watched workspaces, open history stores
    tasks: int = 0
    threads: int = 0
    open_fds: int | None = None
    watched_workspaces: int = 0
    open_stores: int = 0


RuleKind = Literal["execute", "edit", "delete", "move", "mcp"]
RuleDecision = Literal["allow", "deny"]


class RulesParams(Wire):
    """`_tether/rules/list`: the rules of a live session's workspace."""

    WIRE_ERRORS: ClassVar[dict[str, str]] = {"sessionId": _RULES_SESSION}

    session_id: str
    meta: Meta = msgspec.field(default=None, name="_meta")


class Rule(Wire):
    """`id` is null for built-in and config rules (they cannot be removed)."""

    id: int | None
    kind: RuleKind
    pattern: str
    decision: RuleDecision
    source: Literal["built-in", "config", "user"]
    # what it covers, in words (`npm test` (any arguments); edits to files under `src/`)
    scope: str | None = None


class RulesResult(Wire):
    rules: list[Rule]


class RemoveRuleParams(Wire):
    WIRE_ERRORS: ClassVar[dict[str, str]] = {
        "sessionId": _RULES_SESSION,
        "id": "invalid params for {method}: id (an integer from _tether/rules/list) is required",
    }

    session_id: str
    id: int
    meta: Meta = msgspec.field(default=None, name="_meta")
