"""The provider interface and the events every provider yields.

Owns: `Provider` and the small slotted event classes of one model step (text and thinking deltas, tool
calls, usage, finish), shaped one-to-one on OpenAI chunks and Anthropic message events (decision 0005).
Must not: do I/O or know any provider's wire format.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from tether_protocol.conversation import JsonObject, Message


@dataclass(slots=True)
class TextDelta:
    text: str


@dataclass(slots=True)
class ThinkingDelta:
    text: str
    # Anthropic: a signature closes a thinking block; a redacted block carries only
    # opaque data. Both must be sent back, in order, on the next step of a tool loop.
    signature: str | None = None
    redacted: str | None = None


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
    """Token counts of the step so far; a later report replaces an earlier one."""

    input_tokens: int = 0  # all input tokens, cached ones included
    output_tokens: int = 0
    cached_tokens: int = 0  # input tokens read from the provider's prompt cache
    cache_write_tokens: int = 0  # input tokens written to it (Anthropic)


@dataclass(slots=True)
class Finish:
    # "stop" | "tool_calls" | "length" | "refusal": the provider's reason, normalised
    reason: str


ProviderEvent = TextDelta | ThinkingDelta | ToolCallStart | ToolCallArgsDelta | ToolCallEnd | UsageReport | Finish


@dataclass(slots=True)
class ModelRequest:
    """One model call: a stable prefix (system, tools) then the conversation."""

    system: str
    messages: list[Message]  # the conversation, typed; each adapter renders its API's shape
    tools: list[JsonObject]  # JSON Schema tool specs (a JSON edge)
    model: str = ""
    max_output_tokens: int = 0
    # The part of the system prompt that changes between turns, sent after the stable
    # prefix so provider-side prompt caching keeps working.
    dynamic_context: str = ""
    session_id: str = ""
    step: int = 1
    metadata: JsonObject = field(default_factory=dict)
    # the session's reasoning effort / thinking choice: "" (the provider's default), "off",
    # "low", "medium" or "high" (messages_openai.py and messages_anthropic.py apply it)
    reasoning: str = ""


class ProviderError(Exception):
    """The provider failed; the message is written for the person who has to fix it.

    `kind` says what went wrong: auth, not_found, context_length, rate_limit,
    overloaded, server, connection, timeout, truncated, bad_response, quota, scripted.
    `retryable` says whether trying again may help, `retry_after` how long the server
    asked us to wait, `status` the HTTP status if there was one. `output_started` is set
    by the provider when content had already been yielded before the failure (the agent
    loop must not silently replay such a step).
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        kind: str = "bad_response",
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.kind = kind
        self.status = status
        self.retry_after = retry_after
        self.output_started = False


class Provider(abc.ABC):
    name: str = "provider"
    model: str = ""
    context_window: int = 128_000

    @abc.abstractmethod
    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        """Stream one step. Cancellation closes the stream at once."""

    async def aclose(self) -> None:  # noqa: B027 (a default that does nothing, not a duty)
        """Release connections; the default provider holds none."""
