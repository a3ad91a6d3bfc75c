"""The OpenAI chat-completions provider: api.openai.com and every compatible server.

Owns: the request body, the stream's HTTP side (chunks read by `openai_chunks.py`), and the compatible
servers' quirks (decision 0005); a stream ending with neither `[DONE]` nor a finish reason is an error.
Must not: read the environment, log request bodies, or retry on its own (`http.with_retries` decides).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable

from tether_protocol import JsonObject

from .base import (
    ModelRequest,
    Provider,
    ProviderError,
    ProviderEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallStart,
)
from .http import ErrorContext, RetryPolicy, SSEClient, Timeouts, with_retries
from .messages_openai import (
    build_messages,
    build_tools,
    context_window_for,
    generated_id_prefix,
    reasoning_fields,
)
from .openai_chunks import ChunkParser
from .wire import Transport, WireError


def _has_content(batch: list[ProviderEvent]) -> bool:
    return any(isinstance(event, (TextDelta, ThinkingDelta, ToolCallStart)) for event in batch)


class OpenAIProvider(Provider):
    name = "openai"

    def __init__(
        self,
        *,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        api_key: str = "",
        key_env: str = "OPENAI_API_KEY",
        context_window: int | None = None,
        timeouts: Timeouts = Timeouts(),
        retry: RetryPolicy | None = None,
        transport: Transport | None = None,
        max_output_tokens: int = 0,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.context_window = context_window or context_window_for(model)
        self.retry = retry if retry is not None else RetryPolicy()
        self.max_output_tokens = max_output_tokens
        # Local servers (llama.cpp, Ollama, vLLM) need no key; sending an empty bearer
        # token makes some proxies answer 401.
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = SSEClient(
            base_url=self.base_url,
            headers=headers,
            error_context=ErrorContext(self.name, model, key_env, self.base_url),
            timeouts=timeouts,
            transport=transport,
        )

    def build_body(self, request: ModelRequest) -> JsonObject:
        """The request body; the same history always serializes to the same bytes."""
        body: JsonObject = {
            "model": request.model or self.model,
            "messages": build_messages(request.system, request.dynamic_context, request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = build_tools(request.tools)
        limit = request.max_output_tokens or self.max_output_tokens
        if limit > 0:
            body["max_completion_tokens"] = limit
        body.update(reasoning_fields(request.reasoning))  # the session's reasoning effort, if chosen
        return body

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        body = self.build_body(request)
        prefix = generated_id_prefix(body["messages"])
        attempts: list[AsyncGenerator[list[ProviderEvent], None]] = []

        def attempt() -> AsyncGenerator[list[ProviderEvent], None]:
            attempts.append(self._attempt(body, prefix))
            return attempts[-1]

        try:
            async with contextlib.aclosing(
                with_retries(attempt, self.retry, is_content=_has_content)
            ) as batches:
                async for batch in batches:
                    for event in batch:
                        yield event
        finally:
            # with_retries abandons an attempt when it is cancelled; close each one here
            # so its connection is released now, not whenever the GC gets to it.
            for gen in attempts:
                await gen.aclose()

    async def _attempt(
        self, body: JsonObject, id_prefix: Callable[[], str]
    ) -> AsyncGenerator[list[ProviderEvent], None]:
        """One request; yields the events of each socket read as one list."""
        parser = ChunkParser(f"{self.name} ({self.base_url})", id_prefix)
        try:
            async with contextlib.aclosing(self.client.batches("/chat/completions", body)) as reads:
                async for sse_events in reads:
                    try:
                        parser.feed_all(sse_events)
                    except ProviderError:
                        shown = parser.out.take()  # what the read held before the bad chunk
                        if shown:
                            yield shown
                        raise
                    batch = parser.out.take()
                    if batch:
                        yield batch
                    if parser.done:
                        break
        except ProviderError as exc:
            if exc.kind == "not_found":
                raise await self._explain_not_found(exc) from None
            # The model had finished; only the tail ([DONE], maybe usage) went missing.
            if not (parser.finish_reason and exc.kind in ("timeout", "connection")):
                raise
        if not parser.done and not parser.finish_reason:
            raise ProviderError(
                f"{parser.where}: the stream ended before the model finished (no [DONE] or "
                f"finish_reason); the connection or a proxy cut the reply short",
                kind="truncated", retryable=True,
            )
        yield parser.end()

    async def list_models(self) -> list[str]:
        """The model ids `GET {base_url}/models` offers."""
        try:
            data = await self.client.get_json("/models")
        except (WireError, ValueError) as exc:
            raise ProviderError(
                f"{self.name} ({self.base_url}): listing models failed: {exc}",
                kind="connection", retryable=True,
            ) from None
        entries = data.get("data") if isinstance(data, dict) else None
        return [str(e["id"]) for e in entries or [] if isinstance(e, dict) and e.get("id")]

    async def _explain_not_found(self, exc: ProviderError) -> ProviderError:
        try:
            models = await self.list_models()
        except ProviderError:
            # Both paths missing usually means a base URL without its "/v1".
            return ProviderError(
                f"{exc}; {self.base_url}/models did not answer either: is the base URL right "
                f"(it usually ends in /v1)?",
                kind=exc.kind, status=exc.status,
            )
        if not models:
            return exc
        shown = ", ".join(models[:30]) + (", …" if len(models) > 30 else "")
        return ProviderError(f"{exc}; available models: {shown}", kind=exc.kind, status=exc.status)

    async def aclose(self) -> None:
        await self.client.aclose()
