"""Both adapters read a stream the same way however the network splits it into reads.

A stand-in transport (wire.py's `Transport`) serves a recorded stream as the given pieces, each one read (the way
a socket delivers them), so the tests choose the reads exactly: the events, with runs
of deltas merged (`event_runs.runs`), are those of the whole stream for any split; the
deltas of one read become one event, and deltas of different reads are never merged
(each reaches the client as soon as its read was parsed). An event orjson refuses is read
as Python's json module reads it (`providers/lenient_json.py`); Anthropic passes over an
event that is JSON but no object and refuses one neither reads, OpenAI refuses both.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from event_runs import runs
from hypothesis import given, settings
from hypothesis import strategies as st
from local_http import sse
from test_anthropic import PARALLEL_STREAM, TEXT_STREAM, THINKING_STREAM, TOOL_STREAM

from tether.providers.anthropic import AnthropicProvider
from tether.providers.base import ModelRequest, Provider, ProviderError, ProviderEvent, TextDelta, ToolCallArgsDelta
from tether.providers.http import RetryPolicy
from tether.providers.openai import OpenAIProvider
from tether.providers.wire import Response
from tether_protocol.conversation import messages_from_json

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

STREAMS = Path(__file__).parent / "streams"
OPENAI = [
    "text_usage",
    "openrouter_comments",
    "reasoning_content",
    "think_split",
    "llamacpp_tools",
    "ollama_tool",
    "parallel_tools",
]
NO_RETRY = RetryPolicy(max_retries=0)


async def _reads(pieces: list[bytes]) -> AsyncIterator[bytes]:
    for piece in pieces:
        yield piece


class ReadsTransport:
    """A `wire.Transport` answering the one request with a 200 event stream delivered as `pieces`."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    async def open(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        return Response(200, {"content-type": "text/event-stream"}, _reads(self.pieces))

    async def aclose(self) -> None:
        pass


def anthropic_bytes(events: list[dict[str, object]]) -> bytes:
    return b"".join(
        bytes(f) for f in sse(*events, event_names=[str(e["type"]) for e in events]) if isinstance(f, bytes)
    )


def provider(kind: str, pieces: list[bytes]) -> Provider:
    transport = ReadsTransport(pieces)
    if kind == "anthropic":
        return AnthropicProvider(model="claude", base_url="http://model.invalid", retry=NO_RETRY, transport=transport)
    return OpenAIProvider(model="gpt", base_url="http://model.invalid/v1", retry=NO_RETRY, transport=transport)


def read_all(kind: str, pieces: list[bytes]) -> list[ProviderEvent]:
    async def go() -> list[ProviderEvent]:
        p = provider(kind, pieces)
        request = ModelRequest(
            system="s",
            tools=[],
            messages=messages_from_json([{"role": "user", "content": [{"type": "text", "text": "hi"}]}]),
        )
        try:
            return [event async for event in p.stream(request)]
        finally:
            await p.aclose()

    return asyncio.run(go())


def split(raw: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(raw)) for c in cuts})
    return [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True) if b > a]


RAW = {f"openai:{name}": (STREAMS / f"openai_{name}.sse").read_bytes() for name in OPENAI} | {
    "anthropic:tool": anthropic_bytes(TOOL_STREAM),
    "anthropic:parallel": anthropic_bytes(PARALLEL_STREAM),
    "anthropic:thinking": anthropic_bytes(THINKING_STREAM),
}


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(RAW)), st.lists(st.integers(0, 4000), max_size=20))
def test_any_split_into_reads_gives_the_events_of_the_whole(stream: str, cuts: list[int]) -> None:
    kind, raw = stream.split(":")[0], RAW[stream]
    whole = read_all(kind, [raw])
    assert runs(read_all(kind, split(raw, cuts))) == runs(whole)
    assert runs(read_all(kind, [raw[i : i + 1] for i in range(len(raw))])) == runs(whole)


def test_deltas_of_one_read_are_one_event_and_reads_are_never_merged() -> None:
    frames = [f'data: {{"choices":[{{"index":0,"delta":{{"content":"{t}"}}}}]}}\n\n'.encode() for t in "abcd"]
    done = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    events = read_all("openai", [frames[0] + frames[1], frames[2], frames[3] + done])
    assert [e for e in events if isinstance(e, TextDelta)] == [TextDelta("ab"), TextDelta("c"), TextDelta("d")]


def test_argument_deltas_of_one_read_are_one_event_per_call() -> None:
    raw = anthropic_bytes(PARALLEL_STREAM)
    events = read_all("anthropic", [raw])
    assert [e for e in events if isinstance(e, ToolCallArgsDelta)] == [
        ToolCallArgsDelta("toolu_A", '{"path": "a.py"}'),
        ToolCallArgsDelta("toolu_B", '{"path": "b.py"}'),
    ]


def _text(events: list[ProviderEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def _anthropic_with(frame: bytes) -> bytes:
    """TEXT_STREAM ("Hello!") with `frame` sent before its text block ends."""
    raw = anthropic_bytes(TEXT_STREAM)
    cut = raw.index(b"event: content_block_stop")
    return raw[:cut] + frame + raw[cut:]


# Data orjson refuses but Python's json module reads: bytes that are not UTF-8 (read with
# U+FFFD in their place), a bare NaN (JSON to Python, though not an object).
NOT_UTF8 = b"caf\xe9"


def test_anthropic_reads_what_orjson_refuses_and_passes_over_a_non_object() -> None:
    not_utf8 = b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"' + NOT_UTF8 + b'"}}'
    events = read_all("anthropic", [_anthropic_with(b"event: content_block_delta\ndata: " + not_utf8 + b"\n\n")])
    assert _text(events) == "Hello!caf\ufffd"
    assert _text(read_all("anthropic", [_anthropic_with(b"event: ping\ndata: NaN\n\n")])) == "Hello!"
    with pytest.raises(ProviderError, match="non-JSON event") as raised:
        read_all("anthropic", [_anthropic_with(b"event: ping\ndata: {oops\n\n")])
    assert raised.value.kind == "bad_response"


def test_openai_reads_what_orjson_refuses_and_refuses_a_non_object() -> None:
    done = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    not_utf8 = b'data: {"choices":[{"index":0,"delta":{"content":"' + NOT_UTF8 + b'"}}]}\n\n'
    assert _text(read_all("openai", [not_utf8 + done])) == "caf\ufffd"
    with pytest.raises(ProviderError, match="not a JSON object: 'NaN'"):
        read_all("openai", [b"data: NaN\n\n" + done])
