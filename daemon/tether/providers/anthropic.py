"""The Anthropic Messages API provider: streamed `POST {base_url}/v1/messages`.

Owns: the request headers, turning the Messages API event stream (`message_start`,
`content_block_start/delta/stop`, `message_delta`, `message_stop`, `ping`, `error`) into
Tether's provider events, and in-stream errors and truncation. The request body is
built in messages_anthropic.py; HTTP status errors, timeouts and retries come from
http.py.

Must not: touch history or tools, log request bodies or keys, or read the key from the
environment (the caller passes `api_key`; `key_env` only names it in error messages).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any

import httpx

from tether_protocol._json import JsonObject

from .base import (
    Finish,
    ModelRequest,
    Provider,
    ProviderError,
    ProviderEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageReport,
)
from .http import (
    ErrorContext,
    RetryPolicy,
    SSEClient,
    Timeouts,
    in_band_error_text,
    with_retries,
)
from .messages_anthropic import build_body

API_VERSION = "2023-06-01"
DEFAULT_CONTEXT_WINDOW = 200_000  # every current Claude model without the 1M beta

_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
}
# In-stream `error` events arrive after HTTP 200, so http.py never sees a status:
# error type → (kind, retryable), matching how the same error is treated as a status.
_IN_BAND_ERRORS = {
    "overloaded_error": ("overloaded", True),
    "api_error": ("server", True),
    "rate_limit_error": ("rate_limit", True),
    "timeout_error": ("timeout", True),
    "invalid_request_error": ("bad_response", False),
    "request_too_large": ("bad_response", False),
    "authentication_error": ("auth", False),
    "permission_error": ("auth", False),
    "not_found_error": ("not_found", False),
    "billing_error": ("quota", False),
}


class AnthropicProvider(Provider):
    name = "anthropic"

    def __init__(
        self,
        *,
        model: str,
        base_url: str = "https://api.anthropic.com",
        api_key: str = "",
        key_env: str = "ANTHROPIC_API_KEY",
        context_window: int | None = None,
        max_output_tokens: int = 0,
        thinking_budget: int = 0,
        timeouts: Timeouts = Timeouts(),
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.model = model
        self.context_window = context_window or DEFAULT_CONTEXT_WINDOW
        self.max_output_tokens = max_output_tokens
        self.thinking_budget = thinking_budget
        self.retry = retry if retry is not None else RetryPolicy()
        base_url = base_url.rstrip("/")
        # ANTHROPIC_BASE_URL has no /v1; tolerate the OpenAI-style spelling that has one
        # rather than POSTing to /v1/v1/messages and reporting a confusing 404.
        if base_url.endswith("/v1"):
            base_url = base_url[: -len("/v1")]
        self.base_url = base_url
        headers = {"anthropic-version": API_VERSION, "content-type": "application/json"}
        if api_key:
            headers["x-api-key"] = api_key
        self.client = SSEClient(
            base_url=base_url,
            headers=headers,
            error_context=ErrorContext("anthropic", model, key_env, base_url),
            timeouts=timeouts,
            transport=transport,
        )

    def build_body(self, request: ModelRequest) -> JsonObject:
        return build_body(
            request,
            model=request.model or self.model,
            max_output_tokens=request.max_output_tokens or self.max_output_tokens,
            thinking_budget=self.thinking_budget,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        body = self.build_body(request)  # once: every retry sends the same bytes
        attempts = with_retries(lambda: self._attempt(body), self.retry, is_content=_is_content)
        async with aclosing(attempts) as events:
            async for event in events:
                yield event

    async def _attempt(self, body: JsonObject) -> AsyncGenerator[ProviderEvent, None]:
        parser = StreamParser(self.client.error_context)
        async with aclosing(self.client.events("/v1/messages", body)) as sse_events:
            async for sse in sse_events:
                for event in parser.feed(sse.event, sse.data):
                    yield event
                if parser.done:
                    break  # aclosing closes the response; nothing after message_stop counts
        if not parser.done:
            raise ProviderError(
                f"anthropic ({self.base_url}): the stream ended before message_stop (the "
                f"connection closed mid-reply); the reply is incomplete",
                kind="truncated", retryable=True,
            )
        yield parser.usage()
        yield parser.finish()

    async def aclose(self) -> None:
        await self.client.aclose()


def _is_content(event: Any) -> bool:
    # What the client has seen: after one of these a retry would show it twice.
    kind = type(event)
    return kind is TextDelta or kind is ToolCallStart or (kind is ThinkingDelta and bool(event.text))


class StreamParser:
    """One attempt's state: open content blocks by index, usage so far, stop reason."""

    def __init__(self, context: ErrorContext) -> None:
        self.context = context
        self.blocks: dict[int, str] = {}  # index → block type
        self.calls: dict[int, str] = {}  # index → tool_use id
        self.start_inputs: dict[int, Any] = {}
        self.args_seen: set[int] = set()
        self.input_tokens = 0
        self.output_tokens = 0
        self.cache_read = 0
        self.cache_write = 0
        self.stop_reason: str | None = None
        self.done = False

    def feed(self, event_name: str, data: str) -> list[ProviderEvent]:
        if not data.strip():
            return []
        try:
            payload = json.loads(data)
        except ValueError:
            raise ProviderError(
                f"anthropic ({self.context.base_url}): the stream sent a non-JSON event "
                f"({event_name}: {data[:120]!r})",
                kind="bad_response",
            ) from None
        if not isinstance(payload, dict):
            return []
        kind = payload.get("type") or event_name
        if kind == "error" or event_name == "error":
            raise self._in_band_error(payload)
        handler = _HANDLERS.get(kind)
        return handler(self, payload) if handler is not None else []  # ping, unknown: ignored

    def _message_start(self, payload: JsonObject) -> list[ProviderEvent]:
        self._take_usage((payload.get("message") or {}).get("usage") or {})
        return []

    def _block_start(self, payload: JsonObject) -> list[ProviderEvent]:
        index = int(payload.get("index", 0))
        block = payload.get("content_block") or {}
        kind = str(block.get("type", ""))
        self.blocks[index] = kind
        if kind == "text" and block.get("text"):
            return [TextDelta(block["text"])]
        if kind == "tool_use":
            call_id = str(block.get("id", f"toolu_{index}"))
            self.calls[index] = call_id
            self.start_inputs[index] = block.get("input")
            return [ToolCallStart(call_id, str(block.get("name", "")))]
        if kind == "thinking" and (block.get("thinking") or block.get("signature")):
            return [ThinkingDelta(block.get("thinking", ""), signature=block.get("signature") or None)]
        if kind == "redacted_thinking" and block.get("data"):
            return [ThinkingDelta("", redacted=str(block["data"]))]  # kept, never shown
        return []  # unknown blocks: nothing to show

    def _block_delta(self, payload: JsonObject) -> list[ProviderEvent]:
        index = int(payload.get("index", 0))
        delta = payload.get("delta") or {}
        kind = delta.get("type")
        if kind == "text_delta" and delta.get("text"):
            return [TextDelta(delta["text"])]
        if kind == "input_json_delta" and delta.get("partial_json") and index in self.calls:
            self.args_seen.add(index)
            return [ToolCallArgsDelta(self.calls[index], delta["partial_json"])]
        if kind == "thinking_delta" and delta.get("thinking"):
            return [ThinkingDelta(delta["thinking"])]
        if kind == "signature_delta" and delta.get("signature"):
            return [ThinkingDelta("", signature=delta["signature"])]
        return []

    def _block_stop(self, payload: JsonObject) -> list[ProviderEvent]:
        index = int(payload.get("index", 0))
        call_id = self.calls.get(index)
        if call_id is None:
            return []
        events: list[ProviderEvent] = []
        start_input = self.start_inputs.get(index)
        # Streams carry arguments as deltas and start with `input: {}`; a server that
        # puts the whole input in the start block instead still gets its arguments used.
        if index not in self.args_seen and isinstance(start_input, dict) and start_input:
            events.append(ToolCallArgsDelta(call_id, json.dumps(start_input, ensure_ascii=False)))
        # Arguments that do not parse still end the call: the agent loop parses them and
        # tells the model what was wrong, which is more useful than failing the step.
        events.append(ToolCallEnd(call_id))
        return events

    def _message_delta(self, payload: JsonObject) -> list[ProviderEvent]:
        reason = (payload.get("delta") or {}).get("stop_reason")
        if reason:
            self.stop_reason = reason
        self._take_usage(payload.get("usage") or {})
        return []

    def _message_stop(self, payload: JsonObject) -> list[ProviderEvent]:
        self.done = True
        return []

    def _take_usage(self, usage: JsonObject) -> None:
        # Counts are cumulative totals: a later value replaces an earlier one, and a
        # field a message_delta leaves out keeps its message_start value.
        if usage.get("input_tokens") is not None:
            self.input_tokens = int(usage["input_tokens"])
        if usage.get("output_tokens") is not None:
            self.output_tokens = int(usage["output_tokens"])
        if usage.get("cache_read_input_tokens") is not None:
            self.cache_read = int(usage["cache_read_input_tokens"])
        if usage.get("cache_creation_input_tokens") is not None:
            self.cache_write = int(usage["cache_creation_input_tokens"])

    def usage(self) -> UsageReport:
        # Anthropic's input_tokens counts only the uncached part; Tether's counts all.
        return UsageReport(
            input_tokens=self.input_tokens + self.cache_read + self.cache_write,
            output_tokens=self.output_tokens,
            cached_tokens=self.cache_read,
            cache_write_tokens=self.cache_write,
        )

    def finish(self) -> Finish:
        fallback = "tool_calls" if self.calls else "stop"
        return Finish(_STOP_REASONS.get(self.stop_reason or "", fallback))

    def _in_band_error(self, payload: JsonObject) -> ProviderError:
        message, error_type = in_band_error_text(payload)
        kind, retryable = _IN_BAND_ERRORS.get(error_type, ("bad_response", False))
        where = f"anthropic ({self.context.base_url})"
        if "prompt is too long" in message.lower():
            return ProviderError(
                f"{where}: the conversation is longer than {self.context.model}'s context "
                f"window: {message}",
                kind="context_length",
            )
        text = f"{where} reported {error_type or 'an error'} mid-stream: {message}"
        if kind == "auth":
            text += f"; set a valid key in {self.context.key_env} or TETHER_API_KEY"
        return ProviderError(text, kind=kind, retryable=retryable)


_HANDLERS = {
    "message_start": StreamParser._message_start,
    "content_block_start": StreamParser._block_start,
    "content_block_delta": StreamParser._block_delta,
    "content_block_stop": StreamParser._block_stop,
    "message_delta": StreamParser._message_delta,
    "message_stop": StreamParser._message_stop,
}
