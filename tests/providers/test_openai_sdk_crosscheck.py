"""Our adapter and the official `openai` SDK read the same literal byte streams.

Each stream in `streams/openai_*.sse` is served from the local HTTP server once to
`OpenAIProvider` and once to `openai.AsyncOpenAI` (streaming chat completions with
`include_usage`). Where the SDK is right, we must agree with it: text, tool-call
arguments, usage. Where it is lenient, the test pins that we are stricter on purpose:
- llama.cpp repeats a call's name in every delta; the SDK's own accumulator
  (`ChatCompletionStreamState`) concatenates it into `read_fileread_file`, we set it once;
- a stream cut off before `[DONE]` and before any finish_reason ends quietly in the
  SDK; we raise `kind="truncated"`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from local_http import LocalHTTPServer, Reply

from tether.providers.base import (
    ModelRequest,
    ProviderError,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallStart,
    UsageReport,
)
from tether.providers.http import RetryPolicy
from tether.providers.openai import OpenAIProvider
from tether_protocol.conversation import messages_from_json

STREAMS = Path(__file__).parent / "streams"
MODEL = "gpt-4.1"


def stream_reply(name: str) -> Reply:
    raw = (STREAMS / f"openai_{name}.sse").read_bytes()
    return Reply(chunks=[frame + b"\n\n" for frame in raw.split(b"\n\n") if frame.strip()])


@dataclass
class Seen:
    """What a reader made of a stream, in the SDK's terms (tool calls by position)."""

    text: str = ""
    names: list[str] = field(default_factory=list)
    arguments: list[str] = field(default_factory=list)
    usage: tuple[int, int, int] | None = None


async def ours(server: LocalHTTPServer, name: str) -> Seen:
    server.queue(stream_reply(name))
    provider = OpenAIProvider(model=MODEL, base_url=server.url + "/v1", retry=RetryPolicy(max_retries=0))
    request = ModelRequest(
        system="s",
        messages=messages_from_json([{"role": "user", "content": [{"type": "text", "text": "hi"}]}]),
        tools=[],
    )
    seen, order = Seen(), {}
    try:
        async for event in provider.stream(request):
            if isinstance(event, TextDelta):
                seen.text += event.text
            elif isinstance(event, ToolCallStart):
                order[event.call_id] = len(order)
                seen.names.append(event.name)
                seen.arguments.append("")
            elif isinstance(event, ToolCallArgsDelta):
                seen.arguments[order[event.call_id]] += event.delta
            elif isinstance(event, UsageReport):
                seen.usage = (event.input_tokens, event.output_tokens, event.cached_tokens)
    finally:
        await provider.aclose()
    return seen


async def sdk(server: LocalHTTPServer, name: str) -> tuple[Seen, Any]:
    """Manual accumulation by index (arguments, text, usage) plus the SDK's own snapshot."""
    # Imported here, not at the top: the SDK takes ~1 s to import and every test worker
    # collects this module.
    import openai
    from openai.lib.streaming.chat import ChatCompletionStreamState

    server.queue(stream_reply(name))
    client = openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0)
    seen, state = Seen(), ChatCompletionStreamState()
    try:
        stream = await client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        async for chunk in stream:
            state.handle_chunk(chunk)
            if chunk.usage is not None:
                details = chunk.usage.prompt_tokens_details
                cached = (details.cached_tokens or 0) if details else 0
                seen.usage = (chunk.usage.prompt_tokens, chunk.usage.completion_tokens, cached)
            for choice in chunk.choices:
                seen.text += choice.delta.content or ""
                for call in choice.delta.tool_calls or []:
                    index = call.index if call.index is not None else len(seen.arguments)
                    while len(seen.arguments) <= index:
                        seen.arguments.append("")
                    seen.arguments[index] += (call.function.arguments if call.function else None) or ""
    finally:
        await client.close()
    message = state.current_completion_snapshot.choices[0].message
    seen.names = [call.function.name for call in message.tool_calls or []]
    return seen, message


@pytest.fixture
async def server() -> Any:
    async with LocalHTTPServer() as srv:
        yield srv


async def test_text_and_usage_agree(server: LocalHTTPServer) -> None:
    mine = await ours(server, "text_usage")
    theirs, _ = await sdk(server, "text_usage")
    assert mine == theirs
    assert mine.text == "Hello, world! Ünïcødé ✓" and mine.usage == (2006, 9, 1920)


async def test_parallel_tool_calls_agree(server: LocalHTTPServer) -> None:
    mine = await ours(server, "parallel_tools")
    theirs, message = await sdk(server, "parallel_tools")
    assert mine == theirs
    assert [json.loads(a) for a in mine.arguments] == [{"path": "README.md"}, {"pattern": "def main"}]
    assert [c.id for c in message.tool_calls] == ["call_Hq8uWmFkVZ9yFz3dMA4c0PqJ", "call_x2TnB4rLq0cJd8sYvGm7PwEe"]


async def test_llamacpp_repeated_name_sdk_doubles_it_we_do_not(server: LocalHTTPServer) -> None:
    mine = await ours(server, "llamacpp_tools")
    theirs, message = await sdk(server, "llamacpp_tools")
    assert (mine.text, mine.arguments, mine.usage) == (theirs.text, theirs.arguments, theirs.usage)
    assert json.loads(mine.arguments[0]) == {"path": "src/app.py"}
    assert mine.names == ["read_file"]
    assert theirs.names == ["read_fileread_fileread_file"]  # one per delta that repeated it
    assert message.tool_calls[0].id.startswith("AbC7xQ2mZk9LpT4vW1sY8nRd3eFgHj0uAbC7x")


async def test_truncated_stream_sdk_is_silent_we_raise(server: LocalHTTPServer) -> None:
    theirs, _ = await sdk(server, "truncated")
    assert theirs.text == "The answer is"  # no error: the caller cannot tell it was cut off
    with pytest.raises(ProviderError) as info:
        await ours(server, "truncated")
    assert info.value.kind == "truncated"
