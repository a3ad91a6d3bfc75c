"""The OpenAI chat-completions adapter against a real local HTTP server.

Streams are literal byte streams (`streams/openai_*.sse`, or `sse()` for one-off
shapes) shaped like what the servers document and send: api.openai.com (usage chunk
with empty choices, `usage: null` elsewhere), llama.cpp (id and name repeated in every
tool-call delta, `timings`), Ollama (a whole call in one chunk, no `index`), OpenRouter
(`: OPENROUTER PROCESSING` comments), DeepSeek/vLLM (`reasoning_content`), Qwen3 on a
plain server (`<think>` tags in the content). `test_openai_sdk_crosscheck.py` serves
the same files to the official SDK.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from event_runs import runs
from local_http import LocalHTTPServer, Reply, json_reply, sse

from tether.providers.base import (
    Finish,
    ModelRequest,
    ProviderError,
    ProviderEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageReport,
)
from tether.providers.http import RetryPolicy, Timeouts
from tether.providers.openai import OpenAIProvider
from tether_protocol.conversation import messages_from_json

STREAMS = Path(__file__).parent / "streams"
MODEL = "gpt-4.1"
FAST = RetryPolicy(base_s=0.001, max_backoff_s=0.01)
USER = {"role": "user", "content": [{"type": "text", "text": "hi"}]}


def stream_file(name: str, piece: int = 0) -> Reply:
    """A literal stream, one write per SSE frame (or per `piece` bytes, to split frames)."""
    raw = (STREAMS / f"openai_{name}.sse").read_bytes()
    if piece:
        chunks: list[bytes | float] = [raw[i : i + piece] for i in range(0, len(raw), piece)]
    else:
        chunks = [frame + b"\n\n" for frame in raw.split(b"\n\n") if frame.strip()]
    return Reply(chunks=chunks)


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1750000000,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}],
        **extra,
    }


def text_reply(*texts: str, finish: str = "stop") -> Reply:
    return Reply(chunks=sse(*(chunk({"content": t}) for t in texts), chunk(finish=finish), "[DONE]"))


def request(**kw: Any) -> ModelRequest:
    kw["messages"] = messages_from_json(kw.get("messages", [USER]))
    return ModelRequest(**{"system": "You are Tether.", "tools": [], **kw})


@pytest.fixture
async def server() -> Any:
    async with LocalHTTPServer() as srv:
        yield srv


def provider_for(server: LocalHTTPServer, **kw: Any) -> OpenAIProvider:
    return OpenAIProvider(**{"model": MODEL, "base_url": server.url + "/v1", "retry": FAST, **kw})


async def run(
    server: LocalHTTPServer, *replies: Reply, req: ModelRequest | None = None, **kw: Any
) -> list[ProviderEvent]:
    server.queue(*replies)
    provider = provider_for(server, **kw)
    try:
        return [event async for event in provider.stream(req or request())]
    finally:
        await provider.aclose()


async def fails(server: LocalHTTPServer, *replies: Reply, **kw: Any) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        await run(server, *replies, **kw)
    return info.value


def text_of(events: list[ProviderEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def thinking_of(events: list[ProviderEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, ThinkingDelta))


def calls_of(events: list[ProviderEvent]) -> dict[str, tuple[str, Any]]:
    """call id -> (name, parsed arguments), checking every call is started once and ended."""
    names: dict[str, str] = {}
    args: dict[str, str] = {}
    ended: list[str] = []
    for e in events:
        if isinstance(e, ToolCallStart):
            assert e.call_id not in names
            names[e.call_id], args[e.call_id] = e.name, ""
        elif isinstance(e, ToolCallArgsDelta):
            assert e.call_id in names and e.call_id not in ended
            args[e.call_id] += e.delta
        elif isinstance(e, ToolCallEnd):
            ended.append(e.call_id)
    assert sorted(ended) == sorted(names)
    return {cid: (names[cid], json.loads(args[cid] or "{}")) for cid in names}


# ---- streams -------------------------------------------------------------------------


@pytest.mark.parametrize("piece", [0, 7])
async def test_text_and_usage_with_cached_tokens(server: LocalHTTPServer, piece: int) -> None:
    events = await run(server, stream_file("text_usage", piece))
    assert text_of(events) == "Hello, world! Ünïcødé ✓"
    assert events[-2:] == [UsageReport(2006, 9, 1920, 0), Finish("stop")]


async def test_parallel_tool_calls_interleaved_by_index(server: LocalHTTPServer) -> None:
    events = await run(server, stream_file("parallel_tools"))
    assert calls_of(events) == {
        "call_Hq8uWmFkVZ9yFz3dMA4c0PqJ": ("read_file", {"path": "README.md"}),
        "call_x2TnB4rLq0cJd8sYvGm7PwEe": ("grep", {"pattern": "def main"}),
    }
    assert [type(e) for e in events[-4:]] == [ToolCallEnd, ToolCallEnd, UsageReport, Finish]
    assert events[-1] == Finish("tool_calls")


async def test_llamacpp_repeated_id_and_name_are_set_once(server: LocalHTTPServer) -> None:
    events = await run(server, stream_file("llamacpp_tools"))
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert starts == [ToolCallStart("AbC7xQ2mZk9LpT4vW1sY8nRd3eFgHj0u", "read_file")]  # not doubled
    assert calls_of(events) == {starts[0].call_id: ("read_file", {"path": "src/app.py"})}
    assert events[-2:] == [UsageReport(397, 21, 0, 0), Finish("tool_calls")]


async def test_ollama_whole_call_in_one_chunk_without_index(server: LocalHTTPServer) -> None:
    events = await run(server, stream_file("ollama_tool"))
    assert calls_of(events) == {"call_r4x9q2lm": ("list_dir", {"path": "."})}
    assert events[-1] == Finish("tool_calls")


async def test_openrouter_comment_lines_are_ignored(server: LocalHTTPServer) -> None:
    events = await run(server, stream_file("openrouter_comments"))
    assert text_of(events) == "Sure, done."
    assert events[-2:] == [UsageReport(120, 4, 64, 0), Finish("stop")]


async def test_reasoning_content_is_thinking(server: LocalHTTPServer) -> None:
    events = await run(server, stream_file("reasoning_content"))
    assert thinking_of(events) == "The user greets me."
    assert text_of(events) == "Hi there."
    assert runs(events)[:2] == [ThinkingDelta("The user greets me."), TextDelta("Hi there.")]


async def test_reasoning_field_is_thinking(server: LocalHTTPServer) -> None:
    reply = Reply(chunks=sse(chunk({"reasoning": "hmm"}), chunk({"content": "ok"}, "stop"), "[DONE]"))
    events = await run(server, reply)
    assert (thinking_of(events), text_of(events)) == ("hmm", "ok")


async def test_think_tags_split_across_chunks(server: LocalHTTPServer) -> None:
    events = await run(server, stream_file("think_split"))
    assert thinking_of(events) == "The user wants a greeting."
    assert text_of(events) == "Hello <b>world</b>"


async def test_think_tag_later_in_the_answer_is_text(server: LocalHTTPServer) -> None:
    events = await run(server, text_reply("Use the ", "<think> tag</think> like so."))
    assert text_of(events) == "Use the <think> tag</think> like so."
    assert thinking_of(events) == ""


@pytest.mark.parametrize(
    ("wire", "ours"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("content_filter", "refusal"),
        ("tool_calls", "tool_calls"),
        ("function_call", "tool_calls"),
        ("something_new", "stop"),
    ],
)
async def test_finish_reason_mapping(server: LocalHTTPServer, wire: str, ours: str) -> None:
    events = await run(server, text_reply("x", finish=wire))
    assert events[-1] == Finish(ours)


async def test_stop_with_calls_and_shared_index_zero(server: LocalHTTPServer) -> None:
    # Gemini-style: every parallel call has index 0 (told apart by id), finish says "stop".
    calls = [
        {"index": 0, "id": "a1", "type": "function", "function": {"name": "glob", "arguments": '{"pattern": "*.py"}'}},
        {"index": 0, "id": "b2", "type": "function", "function": {"name": "list_dir", "arguments": "{}"}},
    ]
    reply = Reply(chunks=sse(chunk({"tool_calls": calls}), chunk(finish="stop"), "[DONE]"))
    events = await run(server, reply)
    assert calls_of(events) == {"a1": ("glob", {"pattern": "*.py"}), "b2": ("list_dir", {})}
    assert events[-1] == Finish("tool_calls")


async def test_deltas_without_index_or_id_continue_by_position(server: LocalHTTPServer) -> None:
    first = {"id": "c9", "function": {"name": "glob", "arguments": '{"pat'}}
    rest = {"function": {"arguments": 'tern": "*.md"}'}}
    reply = Reply(chunks=sse(chunk({"tool_calls": [first]}), chunk({"tool_calls": [rest]}, "tool_calls"), "[DONE]"))
    assert calls_of(await run(server, reply)) == {"c9": ("glob", {"pattern": "*.md"})}


async def test_calls_without_ids_get_deterministic_distinct_ids(server: LocalHTTPServer) -> None:
    def reply() -> Reply:
        call = {"index": 0, "function": {"name": "list_dir", "arguments": "{}"}}
        return Reply(chunks=sse(chunk({"tool_calls": [call]}, "tool_calls"), "[DONE]"))

    first = await run(server, reply())
    again = await run(server, reply())
    later = await run(server, reply(), req=request(messages=[USER, {"role": "assistant", "text": "x"}, USER]))
    ids = [next(e.call_id for e in ev if isinstance(e, ToolCallStart)) for ev in (first, again, later)]
    assert ids[0] == ids[1] != ids[2]
    assert ids[0].startswith("call_") and ids[0].endswith("_1")


async def test_done_without_finish_reason_is_a_normal_end(server: LocalHTTPServer) -> None:
    events = await run(server, Reply(chunks=sse(chunk({"content": "hi"}), "[DONE]")))
    assert events == [TextDelta("hi"), Finish("stop")]


async def test_closing_the_stream_early_releases_it_at_once(server: LocalHTTPServer) -> None:
    frames = sse(chunk({"content": "first"}), chunk({"content": "never"}, "stop"), "[DONE]")
    server.queue(Reply(chunks=[frames[0], 1.5, *frames[1:]]))
    provider = provider_for(server)
    stream = provider.stream(request())
    assert await anext(stream) == TextDelta("first")
    with anyio.fail_after(0.5):  # not after the server's 1.5 s pause
        await stream.aclose()
    await provider.aclose()


# ---- in-band and stream errors ----------------------------------------------------


async def test_in_band_overload_is_retried(server: LocalHTTPServer) -> None:
    overloaded = Reply(chunks=sse({"error": {"message": "Overloaded", "type": "overloaded_error", "code": 529}}))
    events = await run(server, overloaded, text_reply("ok"))
    assert text_of(events) == "ok" and len(server.requests) == 2


async def test_in_band_error_is_not_retried(server: LocalHTTPServer) -> None:
    bad = Reply(chunks=sse({"error": {"message": "Invalid tool schema", "type": "invalid_request_error"}}))
    err = await fails(server, bad, text_reply("never"))
    assert "Invalid tool schema" in str(err) and not err.retryable and len(server.requests) == 1


async def test_truncated_stream_is_an_error(server: LocalHTTPServer) -> None:
    err = await fails(server, stream_file("truncated"))
    assert err.kind == "truncated" and "no [DONE] or finish_reason" in str(err)
    assert err.output_started and len(server.requests) == 1  # text was shown: no replay


async def test_empty_stream_is_truncated_and_retried(server: LocalHTTPServer) -> None:
    err = await fails(server, Reply(), Reply(), Reply())
    assert err.kind == "truncated" and not err.output_started and len(server.requests) == 3


async def test_invalid_json_chunk(server: LocalHTTPServer) -> None:
    err = await fails(server, Reply(chunks=[b'data: {"choices": [oops\n\n']))
    assert err.kind == "bad_response" and '{"choices": [oops' in str(err)


async def test_gap_timeout_mid_stream(server: LocalHTTPServer) -> None:
    frames = sse(chunk({"content": "Hel"}), chunk({"content": "lo"}, "stop"), "[DONE]")
    err = await fails(server, Reply(chunks=[frames[0], 1.0, *frames[1:]]), timeouts=Timeouts(read_gap=0.2))
    assert err.kind == "timeout" and err.output_started


async def test_gap_after_finish_reason_ends_normally(server: LocalHTTPServer) -> None:
    frames = sse(chunk({"content": "done"}, "stop"), "[DONE]")
    events = await run(server, Reply(chunks=[frames[0], 1.0, frames[1]]), timeouts=Timeouts(read_gap=0.2))
    assert events == [TextDelta("done"), Finish("stop")]


# ---- HTTP errors and retries -------------------------------------------------------


async def test_401_names_the_key_variable(server: LocalHTTPServer) -> None:
    err = await fails(
        server, json_reply(401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}})
    )
    assert err.kind == "auth" and "OPENAI_API_KEY" in str(err) and len(server.requests) == 1


async def test_404_names_the_model_and_lists_models(server: LocalHTTPServer) -> None:
    missing = json_reply(404, {"error": {"message": "model 'gpt-4.1' not found", "type": "not_found_error"}})
    models = json_reply(
        200, {"object": "list", "data": [{"id": "llama3.2", "object": "model"}, {"id": "qwen3:8b", "object": "model"}]}
    )
    err = await fails(server, missing, models)
    assert err.kind == "not_found" and "'gpt-4.1'" in str(err)
    assert "available models: llama3.2, qwen3:8b" in str(err)
    assert [(r.method, r.path) for r in server.requests] == [("POST", "/v1/chat/completions"), ("GET", "/v1/models")]


async def test_404_when_models_is_missing_too_hints_at_the_base_url(server: LocalHTTPServer) -> None:
    missing = json_reply(404, {"error": {"message": "Not Found"}})
    err = await fails(server, missing, missing)
    assert err.kind == "not_found" and "usually ends in /v1" in str(err)


async def test_list_models(server: LocalHTTPServer) -> None:
    server.queue(json_reply(200, {"object": "list", "data": [{"id": "gpt-4.1"}, {"id": "o3"}]}))
    provider = provider_for(server)
    try:
        assert await provider.list_models() == ["gpt-4.1", "o3"]
    finally:
        await provider.aclose()


async def test_429_with_retry_after_ms_then_success(server: LocalHTTPServer) -> None:
    limited = json_reply(
        429, {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}, {"retry-after-ms": "10"}
    )
    events = await run(server, limited, text_reply("ok"))
    assert text_of(events) == "ok" and len(server.requests) == 2


async def test_insufficient_quota_is_not_retried(server: LocalHTTPServer) -> None:
    quota = json_reply(
        429,
        {
            "error": {
                "message": "You exceeded your current quota",
                "type": "insufficient_quota",
                "code": "insufficient_quota",
            }
        },
    )
    err = await fails(server, quota, text_reply("never"))
    assert err.kind == "quota" and not err.retryable and len(server.requests) == 1


async def test_500_twice_then_success(server: LocalHTTPServer) -> None:
    boom = json_reply(500, {"error": {"message": "The server had an error", "type": "server_error"}})
    events = await run(server, boom, boom, text_reply("ok"))
    assert text_of(events) == "ok" and len(server.requests) == 3


async def test_retries_exhausted(server: LocalHTTPServer) -> None:
    busy = json_reply(503, {"error": {"message": "Service unavailable"}})
    err = await fails(server, busy, busy, busy, text_reply("never"))
    assert err.status == 503 and err.retryable and len(server.requests) == 3


async def test_failure_after_text_is_not_retried(server: LocalHTTPServer) -> None:
    frames = sse(chunk({"content": "partial"}), {"error": {"message": "server overloaded"}})
    err = await fails(server, Reply(chunks=frames), text_reply("replayed"))
    assert err.output_started and err.kind == "overloaded" and len(server.requests) == 1


# ---- request body ------------------------------------------------------------------

TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }
]


async def test_request_body_and_auth_header(server: LocalHTTPServer) -> None:
    await run(
        server, text_reply("ok"), req=request(tools=TOOLS, dynamic_context="Workspace root: /w"), api_key="sk-test"
    )
    seen = server.requests[0]
    assert seen.path == "/v1/chat/completions" and seen.headers["authorization"] == "Bearer sk-test"
    assert seen.body["model"] == MODEL and seen.body["stream"] is True
    assert seen.body["stream_options"] == {"include_usage": True}
    assert seen.body["messages"][0] == {"role": "system", "content": "You are Tether.\n\nWorkspace root: /w"}
    assert seen.body["tools"] == [
        {
            "type": "function",
            "function": {"name": "read_file", "description": "Read a file.", "parameters": TOOLS[0]["input_schema"]},
        }
    ]
    assert "max_completion_tokens" not in seen.body


async def test_no_key_no_header_no_tools(server: LocalHTTPServer) -> None:
    await run(server, text_reply("ok"), max_output_tokens=512)
    seen = server.requests[0]
    assert "authorization" not in seen.headers
    assert "tools" not in seen.body and seen.body["max_completion_tokens"] == 512


def history() -> list[dict[str, Any]]:
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Explain"},
                {"type": "resource_link", "uri": "file:///w/a.py", "name": "a.py"},
                {"type": "resource", "resource": {"uri": "file:///w/b.md", "text": "uses ``` fences"}},
            ],
        },
        {
            "role": "assistant",
            "text": "",
            "thinking": "secret",
            "thinking_signature": "sig",
            "tool_calls": [
                {"id": "call_1", "name": "read_file", "arguments": {"path": "a.py"}},
                {"id": "call_2", "name": "grep", "arguments": {}, "raw_arguments": '{"pattern": '},
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "name": "read_file", "content": "x = 1", "is_error": False},
        {
            "role": "tool",
            "tool_call_id": "call_2",
            "name": "grep",
            "content": "arguments are not valid JSON",
            "is_error": True,
        },
    ]


def test_message_conversion() -> None:
    body = OpenAIProvider(model=MODEL).build_body(request(messages=history()))
    user, assistant, ok, bad = body["messages"][1:]
    assert user == {
        "role": "user",
        "content": "Explain\n[file: a.py](file:///w/a.py)\n[file: file:///w/b.md]\n````\nuses ``` fences\n````",
    }
    assert assistant == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}},
            {"id": "call_2", "type": "function", "function": {"name": "grep", "arguments": '{"pattern": '}},
        ],
    }
    assert "secret" not in json.dumps(body)  # thinking is never sent back
    assert ok == {"role": "tool", "tool_call_id": "call_1", "content": "x = 1"}
    assert bad["content"] == "Error: arguments are not valid JSON"


def test_messages_are_a_stable_prefix_step_to_step() -> None:
    provider = OpenAIProvider(model=MODEL)
    step1 = provider.build_body(request(messages=history()[:1], tools=TOOLS))
    step2 = provider.build_body(request(messages=history(), tools=TOOLS))
    first, second = step1["messages"], step2["messages"]
    assert len(first) < len(second)
    assert [json.dumps(m) for m in first] == [json.dumps(m) for m in second[: len(first)]]
    assert json.dumps(second).startswith(json.dumps(first)[:-1])
    whole = json.dumps(step1)  # the body too, up to the end of the shared messages
    assert json.dumps(step2).startswith(whole[: whole.index('], "stream"')])
    assert json.dumps(provider.build_body(request(messages=history()))) == json.dumps(
        provider.build_body(request(messages=history()))
    )


def test_context_window_defaults() -> None:
    windows = {
        m: OpenAIProvider(model=m).context_window
        for m in ("gpt-4.1-mini", "gpt-4o", "o3-mini", "gpt-5", "openai/gpt-4o", "llama3.2", "mystery")
    }
    assert windows == {
        "gpt-4.1-mini": 1_047_576,
        "gpt-4o": 128_000,
        "o3-mini": 200_000,
        "gpt-5": 400_000,
        "openai/gpt-4o": 128_000,
        "llama3.2": 8_192,
        "mystery": 32_768,
    }
    assert OpenAIProvider(model="gpt-4o", context_window=4096).context_window == 4096


async def test_a_reply_that_is_not_an_event_stream_says_what_it_was(server: LocalHTTPServer) -> None:
    # a proxy or a non-streaming endpoint answering 200 with JSON
    error = await fails(server, json_reply(200, {"object": "chat.completion", "choices": []}))
    assert error.kind == "bad_response"
    assert "not an event stream" in str(error) and "application/json" in str(error)
    assert '"object": "chat.completion"' in str(error)
