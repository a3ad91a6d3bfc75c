"""HTTP for model providers: timeouts, retries, error wording, SSE, recording.

Owns: the rules every HTTP provider follows (retries before any output, deadlines, errors a person can act
on; SPEC §5.3, figures in docs/decisions/0005-providers.md), and reading the stream per socket read
(`SSEClient.batches`) with one idle timer per reply.
Must not: parse a provider's event payloads (the adapters do), or log request bodies.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import orjson

from tether_protocol import JsonObject

from .base import ProviderError
from .idle_watch import IdleWatch
from .sse import SSEDecoder, SSEEvent
from .wire import Response, Transport, WireClient, WireError, WireTimeout, get_json

RETRY_STATUSES = frozenset({408, 409, 429, 529}) | frozenset(range(500, 600))
_NO_RETRY_CODES = ("insufficient_quota", "enforced_spend_limit_reached", "billing_hard_limit_reached")
_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "context length",
    "maximum context",
    "prompt is too long",
    "too many tokens",
    "context window",
    "exceeds the context",
)


@dataclass(frozen=True, slots=True)
class Timeouts:
    connect: float = 10.0
    first_byte: float = 300.0
    read_gap: float = 60.0


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 2
    base_s: float = 0.5
    max_backoff_s: float = 8.0
    cap_s: float = 120.0
    # Multiplies every wait; replay uses 0 so recorded retries happen without waiting.
    wait_scale: float = 1.0

    def backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter for retry number `attempt` (1-based)."""
        delay = min(self.base_s * (2.0 ** (attempt - 1)), self.max_backoff_s)
        return delay * (1 - 0.25 * random.random())


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The wait the server asked for: `retry-after-ms`, then `retry-after` (secs or date)."""
    headers = {k.lower(): v for k, v in headers.items()}
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils  # (only for a date: ~2 ms of imports no other reply needs)

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (now if now is not None else time.time()))


def should_retry(status: int, headers: Mapping[str, str], code: str) -> bool:
    forced = headers.get("x-should-retry")
    if forced in ("true", "false"):
        return bool(forced == "true")
    if any(marker in code for marker in _NO_RETRY_CODES):
        return False
    return status in RETRY_STATUSES


@dataclass(frozen=True, slots=True)
class ErrorContext:
    """What an error message needs to tell the person what to do."""

    provider: str
    model: str
    key_env: str
    base_url: str


def error_from_response(
    ctx: ErrorContext, status: int, headers: Mapping[str, str], body: bytes
) -> ProviderError:
    message, code = _error_text(body)
    lowered = f"{code} {message}".lower()
    retry_after = retry_after_seconds(headers)
    retryable = should_retry(status, headers, code)
    where = f"{ctx.provider} ({ctx.base_url})"
    if any(marker in lowered for marker in _CONTEXT_MARKERS):
        return ProviderError(
            f"{where}: the conversation is longer than {ctx.model or 'the model'}'s context window: {message}",
            kind="context_length", status=status,
        )
    if status in (401, 403):
        return ProviderError(
            f"{where} refused the API key (HTTP {status}: {message}); set a valid key in "
            f"{ctx.key_env} or TETHER_API_KEY",
            kind="auth", status=status,
        )
    if status == 404:
        return ProviderError(
            f"{where}: model {ctx.model!r} was not found (HTTP 404: {message})",
            kind="not_found", status=status,
        )
    if (
        any(marker in code for marker in _NO_RETRY_CODES)
        or status == 402
        or "billing" in code
        or ("quota" in lowered and status == 429)
    ):
        return ProviderError(
            f"{where}: quota or spend limit reached, not retrying (HTTP {status}: {message})",
            kind="quota", status=status,
        )
    kind = {429: "rate_limit", 529: "overloaded"}.get(status, "server" if status >= 500 else "bad_response")
    if "overload" in lowered:
        kind = "overloaded"
    return ProviderError(
        f"{where} answered HTTP {status}: {message}",
        kind=kind, status=status, retryable=retryable, retry_after=retry_after,
    )


def _error_text(body: bytes) -> tuple[str, str]:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        text = body.decode("utf-8", "replace").strip()
        return (text[:300] or "(empty body)"), ""
    return in_band_error_text(data)


def in_band_error_text(data: Any) -> tuple[str, str]:
    """(message, code/type) from the error objects OpenAI- and Anthropic-style APIs send."""
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, dict):
        message = str(error.get("message") or error.get("msg") or json.dumps(error)[:300])
        code = str(error.get("code") or error.get("type") or "")
        return message, code
    return str(error)[:300], ""


def _is_event_stream(response: Response) -> bool:
    return "text/event-stream" in response.headers.get("content-type", "").partition(";")[0].lower()


class SSEClient:
    """One provider's HTTP client: POST a JSON body, read the reply as server-sent events."""

    def __init__(
        self,
        *,
        base_url: str,
        headers: dict[str, str],
        error_context: ErrorContext,
        timeouts: Timeouts = Timeouts(),
        transport: Transport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.error_context = error_context
        self.timeouts = timeouts
        self.headers = {k.lower(): v for k, v in headers.items()}
        self._transport: Transport = transport or WireClient(
            self.base_url, os.environ, connect=timeouts.connect, first_byte=timeouts.first_byte, write=30.0
        )
        # Set by the recorder (record.py) to see each exchange.
        self.tap: Callable[[JsonObject], Callable[[int, dict[str, str]], Callable[[bytes], None]]] | None = None

    async def batches(self, path: str, body: JsonObject) -> AsyncGenerator[list[SSEEvent], None]:
        """POST and yield, per socket read, the events it completed; raises ProviderError
        (classified) for every failure."""
        on_exchange = self.tap(body) if self.tap is not None else None
        headers = {**self.headers, "accept": "text/event-stream", "content-type": "application/json"}
        try:
            response = await self._transport.open("POST", f"{self.base_url}{path}", headers, orjson.dumps(body))
            try:
                on_chunk = on_exchange(response.status, dict(response.headers)) if on_exchange else None
                if response.status >= 400:
                    raw = await response.read()
                    if on_chunk is not None:
                        on_chunk(raw)
                    raise error_from_response(self.error_context, response.status, response.headers, raw)
                if not _is_event_stream(response):
                    raise await self._not_a_stream(response)
                async for events in self._events(response, on_chunk):
                    yield events
            finally:
                await response.aclose()
        except WireTimeout as exc:
            raise ProviderError(
                f"{self._where()}: timed out ({type(exc).__name__}); the server may be "
                f"overloaded or still loading the model",
                kind="timeout", retryable=True,
            ) from None
        except WireError as exc:
            raise ProviderError(
                f"{self._where()}: connection failed ({type(exc).__name__}: {exc}); is the "
                f"server running and the base URL right?",
                kind="connection", retryable=True,
            ) from None

    async def _events(
        self, response: Response, on_chunk: Callable[[bytes], None] | None
    ) -> AsyncGenerator[list[SSEEvent], None]:
        """The body's events, per read. With the connection's socket at hand the gap
        between reads is one timer for the whole body (idle_watch.py); a stand-in
        transport's body (a test's, the replay's) has no socket: each read runs under its
        own `fail_after`."""
        decoder = SSEDecoder()
        if response.sock is None:
            async for chunk in self._timed(response.chunks, self.timeouts.read_gap):
                if on_chunk is not None:
                    on_chunk(chunk)
                events = decoder.feed(chunk)
                if events:
                    yield events
            return
        watch = IdleWatch(min(self.timeouts.read_gap, self.timeouts.first_byte), response.sock)
        seen, away = watch.seen, watch.away
        try:
            async for chunk in response.chunks:
                seen()
                if on_chunk is not None:
                    on_chunk(chunk)
                events = decoder.feed(chunk)
                if events:
                    away()  # the consumer's time with them is not the server's silence
                    yield events
                    seen()
        except WireError:
            if not watch.fired:
                raise
        finally:
            watch.stop()
        if watch.fired:
            raise self._gap_error(watch.gap)

    async def _timed(self, chunks: AsyncIterator[bytes], gap: float) -> AsyncGenerator[bytes, None]:
        iterator = chunks.__aiter__()
        while True:
            try:
                with anyio.fail_after(gap):
                    chunk = await iterator.__anext__()
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise self._gap_error(gap) from None
            yield chunk

    def _gap_error(self, gap: float) -> ProviderError:
        return ProviderError(
            f"the model server sent nothing for {gap:.0f} s in the middle of a reply",
            kind="timeout", retryable=True,
        )

    async def get_json(self, path: str, timeout: float = 5.0) -> Any:
        """`GET` a JSON answer; WireError (HTTPStatusError for a 4xx/5xx) or ValueError."""
        return await get_json(self._transport, f"{self.base_url}{path}", self.headers, timeout)

    def _where(self) -> str:
        return f"{self.error_context.provider} ({self.base_url})"

    async def _not_a_stream(self, response: Response) -> ProviderError:
        head = b""
        async for chunk in response.chunks:
            head += chunk
            if len(head) >= 300:
                break
        content_type = response.headers.get("content-type", "")
        text = head.decode("utf-8", "replace").strip()[:300] or "(empty body)"
        return ProviderError(
            f"{self._where()} answered HTTP {response.status} with content-type "
            f"{content_type or '(none)'!r}, not an event stream (text/event-stream): {text}; "
            f"is the base URL that of the model API?",
            kind="bad_response",
        )

    async def aclose(self) -> None:
        await self._transport.aclose()


async def with_retries(
    attempt: Callable[[], AsyncIterator[Any]],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], Awaitable[None]] | None = None,
    is_content: Callable[[Any], bool] = lambda _event: True,
) -> AsyncGenerator[Any, None]:
    """Run `attempt()` and retry it while it fails retryably before yielding content.

    Its items are events or batches of them (`is_content` judges an item). Once content
    has been yielded, a failure is raised with `output_started` set: replaying would show
    the client the same text twice.
    """
    retries = 0
    while True:
        started = False
        try:
            async for event in attempt():
                if not started and is_content(event):
                    started = True
                yield event
            return
        except ProviderError as exc:
            if started:
                exc.output_started = True
                raise
            if not exc.retryable or retries >= policy.max_retries:
                raise
            if exc.retry_after is not None and exc.retry_after > policy.cap_s:
                raise ProviderError(
                    f"{exc} — the server asks to wait {exc.retry_after:.0f} s, more than "
                    f"Tether waits ({policy.cap_s:.0f} s); try again after that",
                    kind=exc.kind, status=exc.status, retry_after=exc.retry_after,
                ) from None
            retries += 1
            delay = exc.retry_after if exc.retry_after is not None else policy.backoff(retries)
            await (sleep or anyio.sleep)(delay * policy.wait_scale)
