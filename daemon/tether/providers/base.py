"""The provider interface and the events every provider yields.

A provider streams one model step: text and thinking deltas, tool calls (start, argument
deltas, end), usage, and a finish reason. The shapes map one-to-one onto OpenAI chat
completion chunks (`delta.content`, `delta.tool_calls[i]`, `finish_reason`, `usage`) and
Anthropic message events (`content_block_start/delta/stop`, `message_delta`), so the
real adapters of the providers issue are translators, not re-designs.

Events are small slotted classes; the agent loop dispatches on their type.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Union


@dataclass(slots=True)
class TextDelta:
    text: str


@dataclass(slots=True)
class ThinkingDelta:
    text: str
    signature: str | None = None  # Anthropic keeps one per thinking block


@dataclass(slots=True)
class ToolCallStart:
    call_id: str
    name: str


@dataclass(slots=True)
class ToolCallArgsDelta:
    call_id: str
    delta: str


@dataclass(slots=True)
class ToolCallEnd:
    call_id: str


@dataclass(slots=True)
class UsageReport:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0


@dataclass(slots=True)
class Finish:
    # "stop" | "tool_calls" | "length" | "refusal": the provider's reason, normalised
    reason: str


ProviderEvent = Union[
    TextDelta, ThinkingDelta, ToolCallStart, ToolCallArgsDelta, ToolCallEnd, UsageReport, Finish
]


@dataclass(slots=True)
class ModelRequest:
    """One model call: a stable prefix (system, tools) then the conversation."""

    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    model: str = ""
    max_output_tokens: int = 0
    # The part of the system prompt that changes between turns, sent after the stable
    # prefix so provider-side prompt caching keeps working.
    dynamic_context: str = ""
    session_id: str = ""
    step: int = 1
    metadata: dict[str, Any] = field(default_factory=dict)


class ProviderError(Exception):
    """The provider failed; `retryable` tells the caller whether trying again may help."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class Provider(abc.ABC):
    name: str = "provider"
    model: str = ""
    context_window: int = 128_000

    @abc.abstractmethod
    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        """Stream one step. Cancellation closes the stream at once."""

    async def aclose(self) -> None:
        """Release connections; the default provider holds none."""
