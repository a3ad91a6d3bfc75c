"""Per-step accumulator: a fresh one for every model step (seed 004's StepState).

Owns: the step's streamed output and calls (`StepState`, `PendingCall`) and what one
call's run produced (`CallOutcome`, with the stored form of its result).
Must not: touch the store or the sink, or outlive its step (no state leaks between steps).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tether_protocol.conversation import (
    AssistantMessage,
    JsonObject,
    Location,
    RedactedThinking,
    ThinkingBlock,
    ToolCall,
    ToolResultMessage,
)

if TYPE_CHECKING:
    from ..tools.base import ToolResult


@dataclass(slots=True)
class PendingCall:
    call_id: str
    name: str
    arg_parts: list[str] = field(default_factory=list)
    arguments: JsonObject | None = None
    parse_error: str | None = None
    ended: bool = False

    def finish(self) -> None:
        if self.ended:
            return
        self.ended = True
        raw = "".join(self.arg_parts).strip()
        if not raw:
            self.arguments = {}
            return
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            self.parse_error = f"the arguments are not valid JSON ({exc.msg} at char {exc.pos})"
            return
        if not isinstance(value, dict):
            self.parse_error = "the arguments must be a JSON object"
            return
        self.arguments = value


@dataclass(slots=True)
class StepState:
    index: int
    text_parts: list[str] = field(default_factory=list)
    thinking_parts: list[str] = field(default_factory=list)
    thinking_signature: str | None = None  # Anthropic: must be sent back with the thinking
    # Anthropic thinking blocks in order, each closed by its signature.
    thinking_blocks: list[ThinkingBlock | RedactedThinking] = field(default_factory=list)
    _block_text: list[str] = field(default_factory=list)
    calls: dict[str, PendingCall] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    finish_reason: str = ""
    started: float = 0.0
    first_token: float | None = None
    llm_done: float = 0.0

    def add_thinking(self, text: str, signature: str | None, redacted: str | None) -> None:
        if text:
            self.thinking_parts.append(text)
            self._block_text.append(text)
        if signature:
            self.thinking_signature = signature
            self.thinking_blocks.append(ThinkingBlock("".join(self._block_text), signature))
            self._block_text = []
        if redacted:
            self.thinking_blocks.append(RedactedThinking(redacted))

    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    @property
    def thinking(self) -> str:
        return "".join(self.thinking_parts)

    def finish_calls(self) -> list[PendingCall]:
        """All calls of the step in call order; ones the stream never ended are ended now."""
        for call in self.calls.values():
            call.finish()
        return list(self.calls.values())

    def assistant(self) -> AssistantMessage:
        """The step's assistant message: what it said, thought and called."""
        return AssistantMessage(
            self.text,
            thinking=self.thinking if self.thinking_parts else None,
            thinking_signature=self.thinking_signature,
            thinking_blocks=tuple(self.thinking_blocks),
            tool_calls=tuple(
                ToolCall(
                    c.call_id,
                    c.name,
                    c.arguments if c.arguments is not None else {},
                    raw_arguments="".join(c.arg_parts) if c.parse_error else None,
                )
                for c in self.finish_calls()
            ),
        )

    def partial(self) -> AssistantMessage:
        """What the step streamed so far (text and thinking, no calls)."""
        return AssistantMessage(self.text, thinking=self.thinking if self.thinking_parts else None)


@dataclass(slots=True)
class CallOutcome:
    """One call run (or refused): its structured result and what goes in the history."""

    call: PendingCall
    result: ToolResult
    title: str | None = None  # the tool's title for the call; None: unknown tool or bad arguments
    kind: str | None = None
    latency_ms: float = 0.0
    # what this call taught the read ledger, in its stored form (a revived session knows
    # what the model has read)
    ledger: dict[str, str | None] | None = None

    def message(self) -> ToolResultMessage:
        """The tool message stored and sent back to the model."""
        result = self.result
        return ToolResultMessage(
            self.call.call_id,
            self.call.name,
            result.text,
            is_error=result.is_error,
            title=self.title,
            kind=self.kind if self.title is not None else None,
            locations=tuple(Location(loc.path, loc.line) for loc in result.locations),
            ledger=self.ledger,
            blocks=result.blocks,
        )
