"""The same literal streams, read by our adapter and by the official `anthropic` SDK.

Both clients talk to the same kind of local HTTP server; where they read the same
stream they must agree on the text, the thinking and its signature, each tool call's
input, and the final output token count. Where we are deliberately stricter (a stream
that ends without `message_stop`) the SDK's behaviour is pinned down here so a change
in it is noticed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from local_http import LocalHTTPServer
from test_anthropic import (
    CACHE_STREAM,
    CUMULATIVE_STREAM,
    MODEL,
    OVERLOADED,
    PARALLEL_STREAM,
    REDACTED_STREAM,
    TEXT_STREAM,
    THINKING_STREAM,
    TOOL_STREAM,
    TRUNCATED_STREAM,
    collect,
    message_start,
    provider,
    stream_reply,
    texts,
    tool_inputs,
)

from tether.providers.base import ProviderError, ThinkingDelta, UsageReport
from tether.providers.http import RetryPolicy

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

STREAMS = {
    "text": TEXT_STREAM,
    "tool": TOOL_STREAM,
    "parallel": PARALLEL_STREAM,
    "thinking": THINKING_STREAM,
    "redacted": REDACTED_STREAM,
    "cumulative": CUMULATIVE_STREAM,
    "cache": CACHE_STREAM,
}


@pytest.fixture
async def server() -> AsyncIterator[LocalHTTPServer]:
    async with LocalHTTPServer() as s:
        yield s


def sdk_client(server: LocalHTTPServer) -> Any:
    """The official SDK's client for the local server. The SDK is imported here, not at the
    top: it takes ~2 s to import and every test worker collects this module."""
    import anthropic

    return anthropic.AsyncAnthropic(base_url=server.url, api_key="x", max_retries=0)


async def sdk_final_message(server: LocalHTTPServer) -> Any:
    client = sdk_client(server)
    try:
        async with client.messages.stream(
            model=MODEL, max_tokens=1024, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            return await stream.get_final_message()
    finally:
        await client.close()


@pytest.mark.parametrize("name", sorted(STREAMS))
async def test_same_reading_as_the_sdk(server: LocalHTTPServer, name: str) -> None:
    events = STREAMS[name]
    server.queue(stream_reply(events), stream_reply(events))
    ours = await collect(provider(server))
    message = await sdk_final_message(server)

    sdk_text = "".join(b.text for b in message.content if b.type == "text")
    assert texts(ours) == sdk_text
    sdk_tools = {b.id: b.input for b in message.content if b.type == "tool_use"}
    assert tool_inputs(ours) == sdk_tools
    sdk_thinking = [b for b in message.content if b.type == "thinking"]
    our_thinking = "".join(e.text for e in ours if isinstance(e, ThinkingDelta))
    assert our_thinking == "".join(b.thinking for b in sdk_thinking)
    our_signatures = [e.signature for e in ours if isinstance(e, ThinkingDelta) and e.signature]
    assert our_signatures == [b.signature for b in sdk_thinking if b.signature]

    usage = next(e for e in ours if isinstance(e, UsageReport))
    assert usage.output_tokens == message.usage.output_tokens
    cache_read = message.usage.cache_read_input_tokens or 0
    cache_write = message.usage.cache_creation_input_tokens or 0
    assert usage.cached_tokens == cache_read and usage.cache_write_tokens == cache_write
    # Ours counts all input; the SDK reports the uncached part separately.
    assert usage.input_tokens == message.usage.input_tokens + cache_read + cache_write
    # Both clients POST the same endpoint. The version headers differ on purpose: we pin
    # 2023-06-01, whose stream format these literal streams follow; this SDK release
    # sends its own newer version (2026-10-21 for anthropic 2.12), and reads the same
    # streams the same way.
    assert [r.path for r in server.requests] == ["/v1/messages", "/v1/messages"]
    assert server.requests[0].headers["anthropic-version"] == "2023-06-01"
    assert server.requests[1].headers["anthropic-version"]


async def test_truncated_stream_sdk_ends_silently_we_raise(server: LocalHTTPServer) -> None:
    server.queue(*[stream_reply(TRUNCATED_STREAM)] * 3)
    client = sdk_client(server)
    try:
        raw = await client.messages.create(
            model=MODEL, max_tokens=1024, messages=[{"role": "user", "content": "hi"}], stream=True
        )
        types = [event.type async for event in raw]
    finally:
        await client.close()
    # The SDK's raw iteration just stops: no message_stop, no error, nothing to tell the
    # caller that the reply is incomplete.
    assert types == ["message_start", "content_block_start", "content_block_delta", "content_block_delta"]
    assert "message_stop" not in types
    # The stream helper is no stricter: get_final_message() returns the partial message,
    # its stop_reason None and its usage still message_start's.
    message = await sdk_final_message(server)
    assert [b.text for b in message.content] == ["Hello!"]
    assert message.stop_reason is None and message.usage.output_tokens == 1

    with pytest.raises(ProviderError) as info:
        await collect(provider(server))
    assert info.value.kind == "truncated" and info.value.output_started


async def test_in_stream_overload_both_raise(server: LocalHTTPServer) -> None:
    import anthropic  # for its error class (see sdk_client)

    server.queue(stream_reply([message_start(), OVERLOADED]), stream_reply([message_start(), OVERLOADED]))
    with pytest.raises(anthropic.APIStatusError) as sdk_error:
        await sdk_final_message(server)
    assert "overloaded_error" in str(sdk_error.value)

    p = provider(server)
    p.retry = RetryPolicy(max_retries=0)  # one request each, like max_retries=0 above
    with pytest.raises(ProviderError) as info:
        await collect(p)
    assert info.value.kind == "overloaded" and info.value.retryable
    assert "Overloaded" in str(info.value)
    assert len(server.requests) == 2
