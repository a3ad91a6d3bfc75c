"""The Anthropic Messages API provider: streamed `POST {base_url}/v1/messages`.

Owns: the request headers, turning the Messages API event stream into Tether's provider events (per socket
read, deltas merged: batch.py), and in-stream errors and truncation; the body is built in messages_anthropic.py.
Must not: touch history or tools, log request bodies or keys, or read the key from the environment (the
caller passes `api_key`; `key_env` only names it in error messages).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from typing import Any

import orjson

from tether_protocol import JsonObject

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
from .batch import Batch
from .http import (
    ErrorContext,
    RetryPolicy,
    SSEClient,
    Timeouts,
    in_band_error_text,
    with_retries,
)
from .lenient_json import lenient_json
from .messages_anthropic import build_body
from .sse import SSEEvent
from .text_shape import TextShape
from .wire import Transport

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
        transport: Transport | None = None,
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
        attempts = with_retries(lambda: self._attempt(body), self.retry, is_content=_has_content)
        async with aclosing(attempts) as batches:
            async for batch in batches:
                for event in batch:
                    yield event

    async def _attempt(self, body: JsonObject) -> AsyncGenerator[list[ProviderEvent], None]:
        """One request; yields the events of each socket read as one list."""
        parser = StreamParser(self.client.error_context)
        async with aclosing(self.client.batches("/v1/messages", body)) as reads:
            async for sse_events in reads:
                try:
                    parser.feed_all(sse_events)
                except ProviderError:
                    shown = parser.out.take()  # what the read held before the error
                    if shown:
                        yield shown
                    raise
                batch = parser.out.take()
                if batch:
                    yield batch
                if parser.done:
                    break  # aclosing closes the response; nothing after message_stop counts
        if not parser.done:
            raise ProviderError(
                f"anthropic ({self.base_url}): the stream ended before message_stop (the "
                f"connection closed mid-reply); the reply is incomplete",
                kind="truncated", retryable=True,
            )
        yield [parser.usage(), parser.finish()]

    async def aclose(self) -> None:
        await self.client.aclose()


def _is_content(event: Any) -> bool:
    # What the client has seen: after one of these a retry would show it twice.
    kind = type(event)
    return kind is TextDelta or kind is ToolCallStart or (kind is ThinkingDelta and bool(event.text))


def _has_content(batch: list[ProviderEvent]) -> bool:
    return any(_is_content(event) for event in batch)


_UNREAD: Any = object()  # an event's data no JSON parser could read


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
        self.out = Batch()  # the events of the read being parsed
        self._shape = TextShape(b'"text":')

    def feed_all(self, events: list[SSEEvent]) -> None:
        """The events of one read; stops at `message_stop`.

        The hot path is a `content_block_delta` with a `text_delta`: one orjson call, a
        few lookups and an append to the text run, or no parse at all when its bytes have
        the previous one's shape (text_shape.py). Anything else takes `feed`.
        """
        shape = self._shape
        if shape.learnt and events:
            names, datas = zip(*events)
            merged = shape.match_all(datas) if "error" not in names else None
            if merged is not None:  # a read of text deltas of the learnt shape only: no parse at all
                if merged:
                    self.out.text(merged)
                return
        loads, run = orjson.loads, []  # run: text given to `out` in one piece
        for event_name, data in events:
            text = shape.match(data) if event_name != "error" else None
            if text is None:
                try:
                    payload = loads(data)
                except orjson.JSONDecodeError:
                    payload = _UNREAD
                text = _plain_text(payload) if event_name != "error" else None
                if text is not None:
                    shape.learn(data, text)
            if text is not None:
                if text:
                    run.append(text)
                continue
            if run:
                self.out.text("".join(run))
                run.clear()
            self.feed(event_name, data, payload)
            if self.done:
                return
        if run:
            self.out.text("".join(run))

    def feed(self, event_name: str, data: bytes, payload: Any = _UNREAD) -> None:
        """One event (`payload`: its JSON, when orjson read it)."""
        if payload is _UNREAD:
            if not data.strip():
                return
            payload = lenient_json(data, _UNREAD)
            if payload is _UNREAD:
                text = data.decode("utf-8", "replace")
                raise ProviderError(
                    f"anthropic ({self.context.base_url}): the stream sent a non-JSON event "
                    f"({event_name}: {text[:120]!r})",
                    kind="bad_response",
                ) from None
        if type(payload) is not dict:
            return
        kind = payload.get("type") or event_name
        if kind == "error" or event_name == "error":
            raise self._in_band_error(payload)
        handler = _HANDLERS.get(kind)
        if handler is not None:  # ping, unknown: ignored
            handler(self, payload)

    def _message_start(self, payload: JsonObject) -> None:
        self._take_usage((payload.get("message") or {}).get("usage") or {})

    def _block_start(self, payload: JsonObject) -> None:
        index = int(payload.get("index", 0))
        block = payload.get("content_block") or {}
        kind = str(block.get("type", ""))
        self.blocks[index] = kind
        if kind == "text" and block.get("text"):
            self.out.text(block["text"])
        elif kind == "tool_use":
            call_id = str(block.get("id", f"toolu_{index}"))
            self.calls[index] = call_id
            self.start_inputs[index] = block.get("input")
            self.out.add(ToolCallStart(call_id, str(block.get("name", ""))))
        elif kind == "thinking" and (block.get("thinking") or block.get("signature")):
            self.out.add(ThinkingDelta(block.get("thinking", ""), signature=block.get("signature") or None))
        elif kind == "redacted_thinking" and block.get("data"):
            self.out.add(ThinkingDelta("", redacted=str(block["data"])))  # kept, never shown
        # unknown blocks: nothing to show

    def _block_delta(self, payload: JsonObject) -> None:
        delta = payload.get("delta") or {}
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text")
            if text and isinstance(text, str):
                self.out.text(text)
            return
        index = int(payload.get("index", 0))
        if kind == "input_json_delta" and delta.get("partial_json") and index in self.calls:
            self.args_seen.add(index)
            self.out.args(self.calls[index], delta["partial_json"])
        elif kind == "thinking_delta" and delta.get("thinking"):
            self.out.thinking(delta["thinking"])
        elif kind == "signature_delta" and delta.get("signature"):
            self.out.add(ThinkingDelta("", signature=delta["signature"]))

    def _block_stop(self, payload: JsonObject) -> None:
        index = int(payload.get("index", 0))
        call_id = self.calls.get(index)
        if call_id is None:
            return
        start_input = self.start_inputs.get(index)
        # Streams carry arguments as deltas and start with `input: {}`; a server that
        # puts the whole input in the start block instead still gets its arguments used.
        if index not in self.args_seen and isinstance(start_input, dict) and start_input:
            self.out.add(ToolCallArgsDelta(call_id, json.dumps(start_input, ensure_ascii=False)))
        # Arguments that do not parse still end the call: the agent loop parses them and
        # tells the model what was wrong, which is more useful than failing the step.
        self.out.add(ToolCallEnd(call_id))

    def _message_delta(self, payload: JsonObject) -> None:
        reason = (payload.get("delta") or {}).get("stop_reason")
        if reason:
            self.stop_reason = reason
        self._take_usage(payload.get("usage") or {})

    def _message_stop(self, payload: JsonObject) -> None:
        self.done = True

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


def _plain_text(payload: Any) -> str | None:
    """The text of a `content_block_delta` carrying a `text_delta`; None for any other event."""
    if type(payload) is not dict or payload.get("type") != "content_block_delta":
        return None
    delta = payload.get("delta")
    if type(delta) is not dict or delta.get("type") != "text_delta":
        return None
    text = delta.get("text")
    return text if type(text) is str else None


_HANDLERS: dict[str, Callable[[StreamParser, JsonObject], None]] = {
    "message_start": StreamParser._message_start,
    "content_block_start": StreamParser._block_start,
    "content_block_delta": StreamParser._block_delta,
    "content_block_stop": StreamParser._block_stop,
    "message_delta": StreamParser._message_delta,
    "message_stop": StreamParser._message_stop,
}
