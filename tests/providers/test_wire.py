"""The providers' own HTTP/1.1 client (providers/wire.py) against real loopback servers.

Each test runs the OpenAI provider over real sockets against a small HTTP/1.1 server
(loopback_server.py: kept-alive connections, content-length or chunked bodies, TLS with a
self-signed CA, a CONNECT proxy), and asserts what a user of the provider sees and what
the server saw: how many connections, which request lines, whether a connection closed.
"""

from __future__ import annotations

import asyncio
import gzip
from typing import Any

import pytest
from loopback_server import Seen, answering, chunked, content_length, read_request, serving, sse_body

from tether.providers.base import ModelRequest, ProviderError, TextDelta
from tether.providers.http import RetryPolicy, Timeouts
from tether.providers.openai import OpenAIProvider
from tether_protocol.conversation import messages_from_json


def request() -> ModelRequest:
    return ModelRequest(
        system="s",
        tools=[],
        messages=messages_from_json([{"role": "user", "content": [{"type": "text", "text": "hi"}]}]),
    )


async def text_of(provider: OpenAIProvider) -> str:
    return "".join([e.text async for e in provider.stream(request()) if isinstance(e, TextDelta)])


def provider(url: str, held: list[Any], **kw: Any) -> OpenAIProvider:
    kw.setdefault("retry", RetryPolicy(max_retries=0))
    made = OpenAIProvider(model="m", base_url=url, **kw)
    held.append(made)
    return made


async def test_two_requests_share_one_kept_alive_connection(stack: list[Any]) -> None:
    server, seen, port = await serving(answering(content_length(sse_body("one")), content_length(sse_body("two"))))
    stack.append(server)
    p = provider(f"http://127.0.0.1:{port}/v1", stack)
    assert [await text_of(p), await text_of(p)] == ["one", "two"]
    assert seen.connections == 1
    assert seen.request_lines == ["POST /v1/chat/completions HTTP/1.1"] * 2


async def test_a_kept_alive_connection_the_server_closed_is_retried_once_on_a_new_one(stack: list[Any]) -> None:
    answers = [content_length(sse_body("first")), b"", content_length(sse_body("second"))]

    async def handle(seen: Seen, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        line = await read_request(reader)
        if line is None:
            return False
        seen.request_lines.append(line)
        answer = answers.pop(0)
        writer.write(answer)
        await writer.drain()
        return bool(answer)  # the second request: read, then the connection closes unanswered

    server, seen, port = await serving(handle)
    stack.append(server)
    p = provider(f"http://127.0.0.1:{port}/v1", stack)  # no provider-level retries
    assert await text_of(p) == "first"
    assert await text_of(p) == "second"
    assert seen.connections == 2 and len(seen.request_lines) == 3


async def test_a_connection_the_server_closed_while_idle_is_not_used_again(stack: list[Any]) -> None:
    server, seen, port = await serving(
        answering(content_length(sse_body("one")), content_length(sse_body("two")), close_after=True)
    )
    stack.append(server)
    p = provider(f"http://127.0.0.1:{port}/v1", stack)  # no provider-level retries
    assert await text_of(p) == "one"
    await asyncio.sleep(0.2)  # the server's close has arrived
    assert await text_of(p) == "two"
    assert seen.connections == 2 and len(seen.request_lines) == 2  # not sent on the closed one


async def test_concurrent_requests_each_get_a_connection_and_reuse_them_after(stack: list[Any]) -> None:
    replies = [content_length(sse_body(t)) for t in ("a", "b", "c", "d")]
    server, seen, port = await serving(answering(*replies))
    stack.append(server)
    p = provider(f"http://127.0.0.1:{port}/v1", stack)
    both = await asyncio.gather(text_of(p), text_of(p))
    assert sorted(both) == ["a", "b"] and seen.connections == 2
    assert sorted(await asyncio.gather(text_of(p), text_of(p))) == ["c", "d"] and seen.connections == 2


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
async def test_content_length_and_chunked_bodies_read_the_same(stack: list[Any], framing: str) -> None:
    body = sse_body("héllo ", "wörld")
    reply = content_length(body) if framing == "content-length" else chunked([body[:7], body[7:40], body[40:]])
    server, seen, port = await serving(answering(reply, content_length(sse_body("again"))))
    stack.append(server)
    p = provider(f"http://127.0.0.1:{port}/v1", stack)
    assert await text_of(p) == "héllo wörld"
    assert await text_of(p) == "again" and seen.connections == 1  # the body was read to its end


async def test_a_gzip_body_is_decoded_and_an_unknown_coding_refused(stack: list[Any]) -> None:
    packed = gzip.compress(sse_body("zipped"))
    server, _seen, port = await serving(
        answering(
            content_length(packed, extra="content-encoding: gzip\r\n"),
            content_length(b"xx", extra="content-encoding: br\r\n"),
        )
    )
    stack.append(server)
    p = provider(f"http://127.0.0.1:{port}/v1", stack)
    assert await text_of(p) == "zipped"
    with pytest.raises(ProviderError, match="content-encoding 'br'") as refused:
        await text_of(p)
    assert refused.value.kind == "connection"


async def test_a_429_with_retry_after_is_waited_for_then_retried(stack: list[Any]) -> None:
    limited = b'{"error": {"message": "slow down", "type": "rate_limit"}}'
    head = (
        f"HTTP/1.1 429 X\r\ncontent-type: application/json\r\nretry-after: 1\r\ncontent-length: {len(limited)}\r\n\r\n"
    )
    server, seen, port = await serving(answering(head.encode() + limited, content_length(sse_body("ok"))))
    stack.append(server)
    p = provider(f"http://127.0.0.1:{port}/v1", stack, retry=RetryPolicy(max_retries=2))
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await text_of(p) == "ok"
    assert loop.time() - started >= 0.9  # retry-after: 1 was honoured
    assert len(seen.request_lines) == 2 and seen.connections == 1


async def test_a_server_stalling_mid_body_is_an_idle_timeout(stack: list[Any]) -> None:
    body = sse_body("never finished")

    async def handle(seen: Seen, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        await read_request(reader)
        writer.write(content_length(body)[: -len(body) + 60])  # the head and 60 bytes of the body
        await writer.drain()
        await asyncio.sleep(30)
        return False

    server, _seen, port = await serving(handle)
    stack.append(server)
    p = provider(f"http://127.0.0.1:{port}/v1", stack, timeouts=Timeouts(read_gap=0.5))
    with pytest.raises(ProviderError, match=r"sent nothing for .* in the middle of a reply") as stalled:
        await asyncio.wait_for(text_of(p), 10)
    assert stalled.value.kind == "timeout"


async def test_cancelling_mid_stream_closes_the_connection_at_once(stack: list[Any]) -> None:
    first = sse_body("partial")[:80]

    async def handle(seen: Seen, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        writer.write(b"%x\r\n%s\r\n" % (len(first), first))
        await writer.drain()
        try:
            if await reader.read(1) == b"":  # the client's EOF
                seen.client_closed.set()
        except ConnectionError:
            seen.client_closed.set()
        return False

    server, seen, port = await serving(handle)
    stack.append(server)
    p = provider(f"http://127.0.0.1:{port}/v1", stack)
    got = asyncio.Event()

    async def consume() -> None:
        async for event in p.stream(request()):
            if isinstance(event, TextDelta):
                got.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(got.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(seen.client_closed.wait(), 5)  # not at GC time, not at the provider's close


async def test_a_key_with_a_line_break_is_refused_without_showing_it(stack: list[Any]) -> None:
    """No header injection, no crash, and the key is not quoted in the error."""
    p = provider("http://127.0.0.1:9/v1", stack, api_key="sk-secret-1\r\nx-injected: 1")
    with pytest.raises(ProviderError, match="a request header holds a character HTTP forbids") as refused:
        await text_of(p)
    assert refused.value.kind == "connection" and "sk-secret-1" not in str(refused.value)
