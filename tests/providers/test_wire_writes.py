"""Both adapters over a real socket, whatever the sizes of the server's writes.

A real HTTP server on 127.0.0.1 (`LocalHTTPServer`) writes a reply in pieces of random
sizes, a yield to its event loop after some of them, so the daemon's reads see one event,
many, or an event cut anywhere; this is the transport path the daemon uses (the reads
come straight from the connection and one timer keeps the idle gap, providers/idle_watch.py).
What must hold: the text deltas joined are the model's text, no character lost, doubled
or moved, and the output sanitiser fed those deltas gives what it gives the whole text.
The gap's timer counts the server's silence only: a consumer slower than the gap is not
a timeout, a server silent for the gap is one, and a gzip-encoded reply is still read.
"""

from __future__ import annotations

import asyncio
import gzip
import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from local_http import LocalHTTPServer, Reply, sse

from tether.agent.sanitize import StreamSanitizer, sanitize
from tether.providers.anthropic import AnthropicProvider
from tether.providers.base import ModelRequest, Provider, ProviderError, ProviderEvent, TextDelta
from tether.providers.http import RetryPolicy, Timeouts
from tether.providers.openai import OpenAIProvider
from tether_protocol.conversation import messages_from_json

NO_RETRY = RetryPolicy(max_retries=0)
# pieces the sanitiser acts on (tags, markers, fences, repeated paragraphs) among plain
# text, JSON's escapes and multi-byte characters
FRAGMENTS = [
    "a",
    "bc ",
    "word ",
    "\n",
    "\n\n",
    "```",
    "`",
    "<final>",
    "</answer>",
    "<tool_call>x</tool_call>",
    "[tool call: f]",
    "é",
    "😀",
    '"',
    "\\",
    "\t",
    "<",
    ">",
    "same para",
    "\u2028",
]


def openai_frames(deltas: list[str]) -> bytes:
    head = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    chunks = [{**head, "choices": [{"index": 0, "delta": {"content": d}, "finish_reason": None}]} for d in deltas]
    chunks.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return b"".join(bytes(f) for f in sse(*chunks, "[DONE]") if isinstance(f, bytes))


def anthropic_frames(deltas: list[str]) -> bytes:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "m1",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "m",
                "usage": {"input_tokens": 5, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": d}} for d in deltas),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]
    frames = sse(*events, event_names=[str(e["type"]) for e in events])
    return b"".join(bytes(f) for f in frames if isinstance(f, bytes))


def make(kind: str, server: LocalHTTPServer, timeouts: Timeouts = Timeouts()) -> Provider:
    if kind == "anthropic":
        return AnthropicProvider(model="m", base_url=server.url, retry=NO_RETRY, timeouts=timeouts)
    return OpenAIProvider(model="m", base_url=server.url + "/v1", retry=NO_RETRY, timeouts=timeouts)


REQUEST = ModelRequest(
    system="s", tools=[], messages=messages_from_json([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
)


async def read(provider: Provider, pause_after_first: float = 0.0) -> list[ProviderEvent]:
    events: list[ProviderEvent] = []
    try:
        async for event in provider.stream(REQUEST):
            events.append(event)
            if pause_after_first and len(events) == 1:
                await asyncio.sleep(pause_after_first)  # a consumer slower than the gap
    finally:
        await provider.aclose()
    return events


def pieces(raw: bytes, cuts: list[int], pauses: list[bool], chunked: bool = False) -> list[bytes | float]:
    """`raw` cut at `cuts` (positions modulo its length), a 0 s pause after some writes;
    `chunked`: each piece an HTTP/1.1 chunk (how most servers frame a stream)."""
    points = sorted({c % len(raw) for c in cuts} | {0, len(raw)})
    out: list[bytes | float] = []
    for i, (a, b) in enumerate(itertools.pairwise(points)):
        out.append(b"%x\r\n%s\r\n" % (b - a, raw[a:b]) if chunked else raw[a:b])
        if pauses and pauses[i % len(pauses)]:
            out.append(0.0)  # the server's loop runs: the next write is a read of its own, or not
    return [*out, b"0\r\n\r\n"] if chunked else out


def sanitised(deltas: list[str]) -> tuple[str, str]:
    stream = StreamSanitizer()
    text, thought = [], []
    for delta in [*deltas, None]:
        shown, held = stream.feed(delta) if delta is not None else stream.finish()
        text.append(shown)
        thought.append(held)
    return "".join(text), "".join(thought)


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(["openai", "anthropic"]),
    text=st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=60).map("".join),
    delta_cuts=st.lists(st.integers(0, 10_000), max_size=40),
    write_cuts=st.lists(st.integers(0, 100_000), max_size=60),
    pauses=st.lists(st.booleans(), max_size=8),
    chunked=st.booleans(),
)
def test_any_write_sizes_give_every_character_in_order_through_the_sanitiser(
    kind: str, text: str, delta_cuts: list[int], write_cuts: list[int], pauses: list[bool], chunked: bool
) -> None:
    points = sorted({c % len(text) for c in delta_cuts} | {0, len(text)})
    deltas = [text[a:b] for a, b in itertools.pairwise(points)]
    raw = openai_frames(deltas) if kind == "openai" else anthropic_frames(deltas)

    async def go() -> list[ProviderEvent]:
        async with LocalHTTPServer() as server:
            headers = {"content-type": "text/event-stream"} | ({"transfer-encoding": "chunked"} if chunked else {})
            server.queue(Reply(chunks=pieces(raw, write_cuts, pauses, chunked), headers=headers))
            return await read(make(kind, server))

    events = asyncio.run(go())
    streamed = [event.text for event in events if isinstance(event, TextDelta)]
    assert "".join(streamed) == text
    assert sanitised(streamed) == sanitize(text)


def _one_event_per_write(kind: str, deltas: list[str]) -> list[bytes | float]:
    raw = openai_frames(deltas) if kind == "openai" else anthropic_frames(deltas)
    frames = [frame + b"\n\n" for frame in raw.split(b"\n\n")[:-1]]
    return [piece for frame in frames for piece in (frame, 0.0)]


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_consumer_slower_than_the_gap_is_not_a_timeout(kind: str) -> None:
    words = ["one ", "two ", "three ", "four ", "five"]
    # the server writes steadily (0.1 s apart, within the gap) while the consumer of the
    # first event takes twice the gap
    steady = [0.1 if piece == 0.0 else piece for piece in _one_event_per_write(kind, words)]
    async with LocalHTTPServer() as server:
        server.queue(Reply(chunks=steady))
        events = await read(make(kind, server, Timeouts(read_gap=0.3)), pause_after_first=0.6)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "".join(words)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_server_silent_for_the_gap_mid_reply_is_a_timeout(kind: str) -> None:
    chunks = _one_event_per_write(kind, ["one ", "two ", "three"])
    stalled = [*chunks[:6], 5.0, *chunks[6:]]  # past message_start / the first deltas, then silence
    async with LocalHTTPServer() as server:
        server.queue(Reply(chunks=stalled))
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(ProviderError) as caught:
            await read(make(kind, server, Timeouts(read_gap=0.3)))
        elapsed = loop.time() - started
    assert caught.value.kind == "timeout" and caught.value.output_started
    assert "sent nothing for" in str(caught.value)
    assert 0.25 <= elapsed < 3.0  # the gap, not the 5 s stall


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_gzip_encoded_reply_is_decoded(kind: str) -> None:
    raw = openai_frames(["zipped ", "text"]) if kind == "openai" else anthropic_frames(["zipped ", "text"])
    body = gzip.compress(raw)
    headers = {"content-type": "text/event-stream", "content-encoding": "gzip"}
    async with LocalHTTPServer() as server:
        server.queue(Reply(chunks=[body[:10], 0.0, body[10:]], headers=headers))
        events = await read(make(kind, server))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "zipped text"


def test_fragments_cover_what_the_sanitiser_changes() -> None:
    # the property above would be weak if the sanitiser left every fragment alone
    parts = [
        "\n\n",
        "<final>",
        "a",
        "</answer>",
        "<tool_call>x</tool_call>",
        "\n",
        "[tool call: f]",
        "\n",
        "bc ",
        "\n\n",
        "same para",
        "\n\n",
        "same para",
    ]
    assert set(parts) <= set(FRAGMENTS)
    assert sanitize("".join(parts)) == ("a\n\nsame para\n", "")
