"""The Anthropic adapter against a real local HTTP server.

Streams are literal event sequences shaped like the examples in Anthropic's streaming
documentation (event names, `message_start` with a full message object, `ping`,
`content_block_*`, cumulative `message_delta` usage). The SDK cross-check module serves
the same streams to the official SDK.
"""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any

import pytest
from event_runs import runs
from local_http import LocalHTTPServer, Reply, json_reply, sse

from tether.providers.anthropic import AnthropicProvider
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
from tether.providers.http import RetryPolicy
from tether.providers.messages_anthropic import strip_moving_breakpoint
from tether_protocol.conversation import message_to_json, messages_from_json

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

MODEL = "claude-sonnet-4-6"
FAST = RetryPolicy(base_s=0.001, max_backoff_s=0.01)


# ---- literal streams ---------------------------------------------------------------


def message_start(input_tokens: int = 25, output_tokens: int = 1, **cache: int) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": MODEL,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens, **cache},
        },
    }


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, d: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": d}


def text(index: int, t: str) -> dict[str, Any]:
    return delta(index, {"type": "text_delta", "text": t})


def args(index: int, partial: str) -> dict[str, Any]:
    return delta(index, {"type": "input_json_delta", "partial_json": partial})


def block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(stop_reason: str | None, output_tokens: int) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": output_tokens},
    }


PING = {"type": "ping"}
STOP = {"type": "message_stop"}
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}

TEXT_STREAM = [
    message_start(),
    block_start(0, {"type": "text", "text": ""}),
    PING,
    text(0, "Hello"),
    text(0, "!"),
    block_stop(0),
    message_delta("end_turn", 15),
    STOP,
]
TOOL_STREAM = [
    message_start(472, 2),
    block_start(0, {"type": "text", "text": ""}),
    text(0, "Okay, let's check the weather for San Francisco, CA:"),
    block_stop(0),
    block_start(1, {"type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "get_weather", "input": {}}),
    args(1, ""),
    args(1, '{"location":'),
    args(1, ' "San Fra'),
    args(1, 'ncisco, CA", "unit": "fah'),
    args(1, 'renheit"}'),
    block_stop(1),
    message_delta("tool_use", 89),
    STOP,
]
PARALLEL_STREAM = [
    message_start(300, 1),
    block_start(0, {"type": "tool_use", "id": "toolu_A", "name": "read_file", "input": {}}),
    args(0, ""),
    args(0, '{"path": "a.py"}'),
    block_stop(0),
    block_start(1, {"type": "tool_use", "id": "toolu_B", "name": "read_file", "input": {}}),
    args(1, '{"path": '),
    args(1, '"b.py"}'),
    block_stop(1),
    message_delta("tool_use", 60),
    STOP,
]
SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
THINKING_STREAM = [
    message_start(60, 3),
    block_start(0, {"type": "thinking", "thinking": ""}),
    delta(0, {"type": "thinking_delta", "thinking": "Let me solve this step by step:\n\n1. "}),
    delta(0, {"type": "thinking_delta", "thinking": "27 * 453 = 12231"}),
    delta(0, {"type": "signature_delta", "signature": SIGNATURE}),
    block_stop(0),
    block_start(1, {"type": "text", "text": ""}),
    text(1, "27 * 453 = 12,231"),
    block_stop(1),
    message_delta("end_turn", 120),
    STOP,
]
REDACTED_STREAM = [
    message_start(60, 3),
    block_start(
        0, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}
    ),
    block_stop(0),
    block_start(1, {"type": "text", "text": ""}),
    text(1, "Done."),
    block_stop(1),
    message_delta("end_turn", 30),
    STOP,
]
# Two message_deltas: usage is cumulative, so the final output_tokens is the last one.
CUMULATIVE_STREAM = [
    message_start(10, 1),
    block_start(0, {"type": "text", "text": ""}),
    text(0, "a"),
    message_delta(None, 40),
    text(0, "b"),
    block_stop(0),
    message_delta("end_turn", 95),
    STOP,
]
CACHE_STREAM = [
    message_start(12, 1, cache_read_input_tokens=2000, cache_creation_input_tokens=300),
    block_start(0, {"type": "text", "text": ""}),
    text(0, "cached"),
    block_stop(0),
    message_delta("end_turn", 7),
    STOP,
]
TRUNCATED_STREAM = TEXT_STREAM[:5]  # ends mid-text, before message_stop


def stream_reply(events: list[dict[str, Any]], **kw: Any) -> Reply:
    # Anthropic names every SSE event after its payload's type.
    return Reply(chunks=sse(*events, event_names=[e["type"] for e in events]), **kw)


# ---- helpers -----------------------------------------------------------------------


def request(messages: list[dict[str, Any]] | None = None, tools: list[dict[str, Any]] | None = None) -> ModelRequest:
    return ModelRequest(
        system="You are Tether.",
        messages=messages_from_json(messages if messages is not None else [user("hi")]),
        tools=tools or [],
        dynamic_context="Workspace root: /ws",
    )


def user(t: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": t}]}


def provider(server: LocalHTTPServer, **kw: Any) -> AnthropicProvider:
    return AnthropicProvider(model=MODEL, base_url=server.url, api_key="sk-test", retry=FAST, **kw)


async def collect(p: AnthropicProvider, req: ModelRequest | None = None) -> list[ProviderEvent]:
    events = []
    try:
        async for event in p.stream(req or request()):
            events.append(event)
    finally:
        await p.aclose()
    return events


def texts(events: list[ProviderEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def tool_inputs(events: list[ProviderEvent]) -> dict[str, dict[str, Any]]:
    parts: dict[str, list[str]] = {}
    for e in events:
        if isinstance(e, ToolCallStart):
            parts[e.call_id] = []
        elif isinstance(e, ToolCallArgsDelta):
            parts[e.call_id].append(e.delta)
    return {cid: json.loads("".join(p)) for cid, p in parts.items()}


@pytest.fixture
async def server() -> AsyncIterator[LocalHTTPServer]:
    async with LocalHTTPServer() as s:
        yield s


# ---- streams -----------------------------------------------------------------------


async def test_text(server: LocalHTTPServer) -> None:
    server.queue(stream_reply(TEXT_STREAM))
    events = await collect(provider(server))
    # "Hello" and "!" are one delta when one read brought both (event_runs.py)
    assert runs(events) == [
        TextDelta("Hello!"),
        UsageReport(input_tokens=25, output_tokens=15),
        Finish("stop"),
    ]
    assert server.requests[0].path == "/v1/messages"


async def test_tool_use_in_pieces_with_empty_first_piece(server: LocalHTTPServer) -> None:
    server.queue(stream_reply(TOOL_STREAM))
    events = await collect(provider(server))
    call_id = "toolu_01T1x1fJ34qAmk2tNTrN7Up6"
    assert ToolCallStart(call_id, "get_weather") in events
    pieces = [e for e in events if isinstance(e, ToolCallArgsDelta)]
    assert 1 <= len(pieces) <= 4 and all(p.delta for p in pieces)  # the empty piece is skipped
    assert tool_inputs(events) == {call_id: {"location": "San Francisco, CA", "unit": "fahrenheit"}}
    assert events.index(ToolCallEnd(call_id)) == len(events) - 3
    assert events[-1] == Finish("tool_calls")


async def test_parallel_tool_use(server: LocalHTTPServer) -> None:
    server.queue(stream_reply(PARALLEL_STREAM))
    events = await collect(provider(server))
    kinds = [(type(e).__name__, getattr(e, "call_id", None)) for e in events if not isinstance(e, ToolCallArgsDelta)]
    assert kinds == [
        ("ToolCallStart", "toolu_A"),
        ("ToolCallEnd", "toolu_A"),
        ("ToolCallStart", "toolu_B"),
        ("ToolCallEnd", "toolu_B"),
        ("UsageReport", None),
        ("Finish", None),
    ]
    assert tool_inputs(events) == {"toolu_A": {"path": "a.py"}, "toolu_B": {"path": "b.py"}}


async def test_thinking_signature_surfaced_and_sent_back(server: LocalHTTPServer) -> None:
    server.queue(stream_reply(THINKING_STREAM))
    p = provider(server, thinking_budget=2048)
    events = await collect(p)
    thinking = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert thinking == "Let me solve this step by step:\n\n1. 27 * 453 = 12231"
    assert ThinkingDelta("", signature=SIGNATURE) in events
    assert texts(events) == "27 * 453 = 12,231"
    # The next step's history carries the assistant message as agent/state.py stores it.
    history = [
        user("27 * 453?"),
        {"role": "assistant", "text": texts(events), "thinking": thinking, "thinking_signature": SIGNATURE},
        user("thanks"),
    ]
    body = p.build_body(request(history))
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": thinking, "signature": SIGNATURE},
            {"type": "text", "text": "27 * 453 = 12,231"},
        ],
    }
    # Thinking without a signature cannot be verified by the API, so it is not sent.
    unsigned = p.build_body(request([user("q"), {"role": "assistant", "text": "a", "thinking": "t"}, user("r")]))
    assert unsigned["messages"][1]["content"] == [{"type": "text", "text": "a"}]


async def test_redacted_thinking_is_kept_but_never_shown(server: LocalHTTPServer) -> None:
    server.queue(stream_reply(REDACTED_STREAM))
    events = await collect(provider(server))
    redacted = [e for e in events if isinstance(e, ThinkingDelta)]
    assert len(redacted) == 1 and redacted[0].text == "" and redacted[0].redacted
    assert [e for e in events if not isinstance(e, ThinkingDelta)] == [
        TextDelta("Done."),
        UsageReport(60, 30),
        Finish("stop"),
    ]


async def test_ping_and_unknown_events_ignored(server: LocalHTTPServer) -> None:
    events = list(TEXT_STREAM)
    events[3:3] = [
        PING,
        {"type": "future_event", "whatever": 1},
        delta(0, {"type": "citations_delta", "citation": {"cited_text": "x"}}),
        block_start(5, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}),
        block_stop(5),
    ]
    server.queue(stream_reply(events))
    assert texts(await collect(provider(server))) == "Hello!"


async def test_cumulative_message_delta_usage(server: LocalHTTPServer) -> None:
    server.queue(stream_reply(CUMULATIVE_STREAM))
    events = await collect(provider(server))
    assert [e for e in events if isinstance(e, UsageReport)] == [UsageReport(10, 95)]


async def test_cache_usage_fields(server: LocalHTTPServer) -> None:
    server.queue(stream_reply(CACHE_STREAM))
    events = await collect(provider(server))
    assert events[-2] == UsageReport(
        input_tokens=12 + 2000 + 300, output_tokens=7, cached_tokens=2000, cache_write_tokens=300
    )


@pytest.mark.parametrize(
    ("stop_reason", "expected"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("pause_turn", "stop"),
        ("tool_use", "tool_calls"),
        ("max_tokens", "length"),
        ("refusal", "refusal"),
        ("something_new", "stop"),
    ],
)
async def test_stop_reason_mapping(server: LocalHTTPServer, stop_reason: str, expected: str) -> None:
    server.queue(stream_reply([*TEXT_STREAM[:-2], message_delta(stop_reason, 3), STOP]))
    assert (await collect(provider(server)))[-1] == Finish(expected)


# ---- errors and retries ------------------------------------------------------------


async def test_overloaded_in_stream_then_good_reply(server: LocalHTTPServer) -> None:
    server.queue(stream_reply([message_start(), PING, OVERLOADED]), stream_reply(TEXT_STREAM))
    events = await collect(provider(server))
    assert texts(events) == "Hello!"
    assert len(server.requests) == 2


async def test_overloaded_after_text_is_not_retried(server: LocalHTTPServer) -> None:
    server.queue(stream_reply([*TEXT_STREAM[:4], OVERLOADED]), stream_reply(TEXT_STREAM))
    seen: list[ProviderEvent] = []
    p = provider(server)
    with pytest.raises(ProviderError) as info:
        async for event in p.stream(request()):
            seen.append(event)
    await p.aclose()
    assert seen == [TextDelta("Hello")]
    assert info.value.kind == "overloaded" and info.value.retryable and info.value.output_started
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("error_type", "kind", "retryable", "requests"),
    [("api_error", "server", True, 3), ("invalid_request_error", "bad_response", False, 1)],
)
async def test_other_in_stream_errors(
    server: LocalHTTPServer, error_type: str, kind: str, retryable: bool, requests: int
) -> None:
    error = {"type": "error", "error": {"type": error_type, "message": "boom"}}
    server.fallback = stream_reply([message_start(), error])
    with pytest.raises(ProviderError) as info:
        await collect(provider(server))
    assert (info.value.kind, info.value.retryable) == (kind, retryable)
    assert "boom" in str(info.value)
    assert len(server.requests) == requests  # RetryPolicy default: 2 retries


async def test_truncated_stream(server: LocalHTTPServer) -> None:
    server.fallback = stream_reply(TRUNCATED_STREAM[:2])  # nothing yielded: retried, then raised
    with pytest.raises(ProviderError) as info:
        await collect(provider(server))
    assert info.value.kind == "truncated" and info.value.retryable
    assert "message_stop" in str(info.value)
    assert len(server.requests) == 3


async def test_truncated_after_text_raises_with_output_started(server: LocalHTTPServer) -> None:
    server.queue(stream_reply(TRUNCATED_STREAM))
    with pytest.raises(ProviderError) as info:
        await collect(provider(server))
    assert info.value.kind == "truncated" and info.value.output_started


async def test_401_names_the_key_variable(server: LocalHTTPServer) -> None:
    server.queue(
        json_reply(401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})
    )
    with pytest.raises(ProviderError) as info:
        await collect(provider(server))
    assert info.value.kind == "auth" and not info.value.retryable
    assert "ANTHROPIC_API_KEY" in str(info.value)
    assert len(server.requests) == 1


async def test_529_with_retry_after_then_200(server: LocalHTTPServer) -> None:
    server.queue(
        json_reply(
            529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, {"retry-after": "0"}
        ),
        stream_reply(TEXT_STREAM),
    )
    assert texts(await collect(provider(server))) == "Hello!"
    assert len(server.requests) == 2


async def test_400_invalid_request_not_retried(server: LocalHTTPServer) -> None:
    server.queue(
        json_reply(
            400,
            {"type": "error", "error": {"type": "invalid_request_error", "message": "messages: roles must alternate"}},
        )
    )
    with pytest.raises(ProviderError) as info:
        await collect(provider(server))
    assert not info.value.retryable and "roles must alternate" in str(info.value)
    assert len(server.requests) == 1


# ---- request ---------------------------------------------------------------------------

TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
    {
        "name": "grep",
        "description": "Search.",
        "input_schema": {"type": "object", "properties": {"pattern": {"type": "string"}}},
    },
]


def tool_step_history() -> list[dict[str, Any]]:
    return [
        user("read a.py and b.py"),
        {
            "role": "assistant",
            "text": "Reading both.",
            "tool_calls": [
                {"id": "toolu_A", "name": "read_file", "arguments": {"path": "a.py"}},
                {"id": "toolu_B", "name": "read_file", "arguments": {"path": "b.py"}},
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_A", "name": "read_file", "content": "print('a')", "is_error": False},
        {"role": "tool", "tool_call_id": "toolu_B", "name": "read_file", "content": "no such file", "is_error": True},
    ]


async def test_request_headers_and_body(server: LocalHTTPServer) -> None:
    server.queue(stream_reply(TEXT_STREAM))
    history = [
        *tool_step_history(),
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "and this:"},
                {"type": "resource_link", "uri": "file:///ws/c.py", "name": "c.py"},
                {"type": "resource", "resource": {"uri": "file:///ws/d.md", "text": "has ``` inside"}},
            ],
        },
    ]
    await collect(provider(server), request(history, TOOLS))
    seen = server.requests[0]
    assert seen.headers["x-api-key"] == "sk-test"
    assert seen.headers["anthropic-version"] == "2023-06-01"
    assert seen.headers["content-type"] == "application/json"
    body = seen.body
    assert body["model"] == MODEL and body["stream"] is True and body["max_tokens"] == 32000
    assert "thinking" not in body
    assert body["system"] == [
        {"type": "text", "text": "You are Tether.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Workspace root: /ws"},
    ]
    assert [t["name"] for t in body["tools"]] == ["read_file", "grep"]
    assert all("cache_control" not in t for t in body["tools"])  # the system breakpoint covers them
    assert body["tools"][0]["input_schema"] == TOOLS[0]["input_schema"]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "Reading both."},
        {"type": "tool_use", "id": "toolu_A", "name": "read_file", "input": {"path": "a.py"}},
        {"type": "tool_use", "id": "toolu_B", "name": "read_file", "input": {"path": "b.py"}},
    ]
    # Both tool results and the next prompt share one user message, results first.
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_A", "content": "print('a')"},
        {"type": "tool_result", "tool_use_id": "toolu_B", "content": "no such file", "is_error": True},
        {"type": "text", "text": "and this:"},
        {"type": "text", "text": "[file: c.py](file:///ws/c.py)"},
        # an attached file as every provider renders it (tether_protocol.conversation.block_text)
        {
            "type": "text",
            "text": "[file: file:///ws/d.md]\n````\nhas ``` inside\n````",
            "cache_control": {"type": "ephemeral"},
        },
    ]
    # Only the latest message carries the moving breakpoint.
    assert ["cache_control" in b for m in body["messages"] for b in m["content"]].count(True) == 1


def test_breakpoint_on_last_tool_without_system_text() -> None:
    p = AnthropicProvider(model="claude-3-5-haiku-20241022")
    body = p.build_body(ModelRequest(system="", messages=messages_from_json([user("hi")]), tools=TOOLS))
    assert "system" not in body and body["max_tokens"] == 8192
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in body["tools"][0]


def test_thinking_budget_fits_under_max_tokens() -> None:
    p = AnthropicProvider(model="some-proxy-model", max_output_tokens=4000, thinking_budget=8000)
    body = p.build_body(request())
    assert body["thinking"]["budget_tokens"] < body["max_tokens"]


async def test_base_url_with_v1_is_tolerated(server: LocalHTTPServer) -> None:
    server.queue(stream_reply(TEXT_STREAM))
    p = AnthropicProvider(model=MODEL, base_url=server.url + "/v1/", retry=FAST)
    await collect(p)
    assert server.requests[0].path == "/v1/messages"
    assert "x-api-key" not in server.requests[0].headers  # no key given, none sent
    assert p.context_window == 200_000
    assert AnthropicProvider(model=MODEL, context_window=1_000_000).context_window == 1_000_000


def test_prefix_stability_across_steps() -> None:
    p = AnthropicProvider(model=MODEL)
    steps = [
        [user("read a.py and b.py")],
        tool_step_history(),
        [*tool_step_history(), {"role": "assistant", "text": "a prints a; b is missing."}],
        [*tool_step_history(), {"role": "assistant", "text": "a prints a; b is missing."}, user("create b.py")],
    ]
    bodies = [p.build_body(request(list(h), TOOLS)) for h in steps]
    # Same history → byte-identical body.
    assert json.dumps(p.build_body(request(steps[1], TOOLS))) == json.dumps(bodies[1])
    for earlier, later in itertools.pairwise(bodies):
        a, b = strip_moving_breakpoint(earlier), strip_moving_breakpoint(later)
        assert {k: v for k, v in a.items() if k != "messages"} == {k: v for k, v in b.items() if k != "messages"}
        # The earlier messages list is a prefix of the later one, byte for byte.
        n = len(a["messages"])
        assert n < len(b["messages"])
        assert json.dumps(b["messages"][:n]) == json.dumps(a["messages"])
    # The stored history is never mutated by building a body.
    assert steps[1] == tool_step_history()


def test_several_thinking_blocks_and_redacted_ones_go_back_in_order():
    from tether.agent.state import StepState
    from tether.providers.base import ModelRequest
    from tether.providers.messages_anthropic import build_body

    state = StepState(1)
    state.add_thinking("first ", None, None)
    state.add_thinking("thought", "sig-1", None)
    state.add_thinking("", None, "opaque-data")
    state.add_thinking("second", "sig-2", None)
    assistant = message_to_json(state.assistant())  # as stored: read back for the request
    request = ModelRequest(
        system="s",
        messages=messages_from_json([{"role": "user", "content": [{"type": "text", "text": "q"}]}, assistant]),
        tools=[],
    )
    body = build_body(request, model="claude-x")
    blocks = body["messages"][1]["content"]
    assert blocks[:3] == [
        {"type": "thinking", "thinking": "first thought", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "opaque-data"},
        {"type": "thinking", "thinking": "second", "signature": "sig-2"},
    ]
