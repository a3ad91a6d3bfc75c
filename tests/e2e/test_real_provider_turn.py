"""A whole agent turn through `tether serve --provider openai|anthropic` over real HTTP.

The daemon is a subprocess; the model server is `LocalHTTPServer` (tests/providers/
local_http.py) in this test process, serving literal SSE byte streams shaped like the
real APIs'. What is checked is what only the full stack shows: the tool round trip as
the client sees it, the second request of a multi-step turn as the server sees it (the
tool result is in it and the first request's messages are its unchanged prefix, so a
provider-side prompt cache keeps hitting), the loop's once-per-turn retry of a stream
that broke after text, and how a refused key reaches the client (-32012, data.kind).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from daemon_harness import text_of
from tether_client import ClientError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "providers"))
from local_http import LocalHTTPServer, Reply, json_reply, sse

from tether.providers.messages_anthropic import strip_moving_breakpoint

PROVIDERS = ["openai", "anthropic"]
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
FAKE_KEY = "sk-e2e-fake-7d1c"  # recognisable; must never appear in an error message
CALL_ID = {"openai": "call_readme_1", "anthropic": "toolu_readme_1"}
README_TEXT = "Hello from the sample workspace."


# ---- literal streams ---------------------------------------------------------------------


def _oa(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-e2e",
        "object": "chat.completion.chunk",
        "created": 1750000000,
        "model": "m",
        "choices": [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}],
        "usage": None,
    }


_OA_USAGE = {
    "id": "chatcmpl-e2e",
    "object": "chat.completion.chunk",
    "created": 1750000000,
    "model": "m",
    "choices": [],
    "usage": {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129},
}


def _an(events: list[dict[str, Any]]) -> list[bytes | float]:
    return sse(*events, event_names=[e["type"] for e in events])


def _an_start() -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_e2e",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": "m",
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 120, "output_tokens": 1},
        },
    }


def _an_end(reason: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": None},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]


def tool_call_chunks(kind: str, arguments: dict[str, Any]) -> list[bytes | float]:
    raw = json.dumps(arguments)
    pieces = [raw[i : i + 7] for i in range(0, len(raw), 7)]
    if kind == "openai":
        return sse(
            _oa({"role": "assistant", "content": None}),
            _oa(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": CALL_ID[kind],
                            "type": "function",
                            "function": {"name": "read_file", "arguments": ""},
                        }
                    ]
                }
            ),
            *(_oa({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces),
            _oa(finish="tool_calls"),
            _OA_USAGE,
            "[DONE]",
        )
    return _an(
        [
            _an_start(),
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": CALL_ID[kind], "name": "read_file", "input": {}},
            },
            *(
                {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": p}}
                for p in pieces
            ),
            {"type": "content_block_stop", "index": 0},
            *_an_end("tool_use"),
        ]
    )


def text_chunks(kind: str, *texts: str) -> list[bytes | float]:
    if kind == "openai":
        return sse(
            _oa({"role": "assistant", "content": ""}),
            *(_oa({"content": t}) for t in texts),
            _oa(finish="stop"),
            _OA_USAGE,
            "[DONE]",
        )
    return _an(
        [
            _an_start(),
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "ping"},
            *({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}} for t in texts),
            {"type": "content_block_stop", "index": 0},
            *_an_end("end_turn"),
        ]
    )


def serve_command(kind: str, server: LocalHTTPServer, *extra: str) -> list[str]:
    base = server.url + ("/v1" if kind == "openai" else "")
    return [
        sys.executable,
        "-m",
        "tether",
        "serve",
        "--provider",
        kind,
        "--base-url",
        base,
        "--model",
        "m",
        *extra,
    ]


def model_path(kind: str) -> str:
    return "/v1/chat/completions" if kind == "openai" else "/v1/messages"


# ---- tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_tool_round_trip_and_a_stable_prefix_over_http(spawn_daemon, workspace: Path, kind: str) -> None:
    async with LocalHTTPServer() as server:
        server.queue(
            Reply(chunks=tool_call_chunks(kind, {"path": "README.md"})),
            Reply(chunks=text_chunks(kind, "The README ", "says hello.")),
        )
        daemon = await spawn_daemon(command=serve_command(kind, server), env={KEY_ENV[kind]: FAKE_KEY})
        session = await daemon.client.new_session(workspace)
        turn = session.prompt("What does the README say?")
        updates = [u async for u in turn]

    # The client: tool call -> completed with the file's text -> the final answer.
    assert turn.stop_reason == "end_turn"
    order = [u["sessionUpdate"] for u in updates]
    call = next(u for u in updates if u["sessionUpdate"] == "tool_call")
    assert call["toolCallId"] == CALL_ID[kind] and call["kind"] == "read"
    completed = [i for i, u in enumerate(updates) if u.get("status") == "completed"]
    assert len(completed) == 1
    done = updates[completed[0]]
    assert done["toolCallId"] == CALL_ID[kind]
    assert README_TEXT in done["content"][0]["content"]["text"]
    last_text = max(i for i, k in enumerate(order) if k == "agent_message_chunk")
    assert order.index("tool_call") < completed[0] < last_text
    assert text_of(updates) == "The README says hello."

    # The server: two requests to the model endpoint, with the key in the right header.
    first, second = server.requests
    assert first.path == second.path == model_path(kind)
    if kind == "openai":
        assert first.headers["authorization"] == f"Bearer {FAKE_KEY}"
    else:
        assert first.headers["x-api-key"] == FAKE_KEY and "authorization" not in first.headers
    a, b = first.body, second.body
    assert a["stream"] is True and a["model"] == b["model"] == "m"
    assert a["tools"] == b["tools"] and any((t.get("function") or t)["name"] == "read_file" for t in a["tools"])
    if kind == "openai":
        prefix = a["messages"]
        assert b["messages"][: len(prefix)] == prefix  # byte-stable prefix: cache hits
        echoed, result = b["messages"][len(prefix) :]
        assert echoed["role"] == "assistant"
        (tc,) = echoed["tool_calls"]
        assert tc["id"] == CALL_ID[kind] and json.loads(tc["function"]["arguments"]) == {"path": "README.md"}
        assert result["role"] == "tool" and result["tool_call_id"] == CALL_ID[kind]
        assert README_TEXT in result["content"]
    else:
        assert a["system"] == b["system"]
        # Only the moving cache breakpoint on the latest message may differ.
        prefix = strip_moving_breakpoint(a)["messages"]
        assert b["messages"][: len(prefix)] == prefix
        echoed, result = b["messages"][len(prefix) :]
        assert echoed["role"] == "assistant"
        (use,) = [blk for blk in echoed["content"] if blk["type"] == "tool_use"]
        assert use["id"] == CALL_ID[kind] and use["input"] == {"path": "README.md"}
        assert result["role"] == "user"
        (tool_result,) = result["content"]
        assert tool_result["type"] == "tool_result" and tool_result["tool_use_id"] == CALL_ID[kind]
        assert README_TEXT in json.dumps(tool_result["content"])


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_stream_broken_after_text_is_retried_once_and_kept_as_incomplete(
    spawn_daemon, workspace: Path, kind: str
) -> None:
    broken = text_chunks(kind, "Let me ", "look ", "at that.")
    # The socket closes after the first text deltas: no finish reason, no terminator.
    cut = 3 if kind == "openai" else 5
    async with LocalHTTPServer() as server:
        server.queue(
            Reply(chunks=broken, drop_after=cut),
            Reply(chunks=text_chunks(kind, "All ", "good.")),
        )
        daemon = await spawn_daemon(command=serve_command(kind, server), env={KEY_ENV[kind]: FAKE_KEY})
        session = await daemon.client.new_session(workspace)
        turn = session.prompt("hello")
        updates = [u async for u in turn]

        assert turn.stop_reason == "end_turn"
        chunks = [u for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
        notices = [u for u in chunks if u.get("_meta", {}).get("tether", {}).get("notice")]
        assert len(notices) == 1 and "Retrying this step once" in notices[0]["content"]["text"]
        shown = "".join(u["content"]["text"] for u in chunks if u not in notices)
        assert shown == "Let me look All good."
        # The retried step asks the model exactly the same thing again.
        assert len(server.requests) == 2
        assert server.requests[0].body == server.requests[1].body

        other = await spawn_daemon(command=serve_command(kind, server), env={KEY_ENV[kind]: FAKE_KEY})
        loaded = await other.client.load_session(session.id, workspace)
    kept = [u for u in loaded.updates if u["sessionUpdate"] == "agent_message_chunk"]
    # A complete message carries no status; the broken partial is marked.
    assert [(u["content"]["text"], u.get("_meta", {}).get("tether", {}).get("status")) for u in kept] == [
        ("Let me look ", "incomplete"),
        ("All good.", None),
    ]


ERROR_401 = {
    "openai": {
        "error": {
            "message": "Incorrect API key provided: sk-e2e***7d1c.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        }
    },
    "anthropic": {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}},
}


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_refused_key_fails_the_prompt_naming_the_variable(spawn_daemon, workspace: Path, kind: str) -> None:
    async with LocalHTTPServer() as server:
        server.fallback = json_reply(401, ERROR_401[kind])
        daemon = await spawn_daemon(command=serve_command(kind, server), env={KEY_ENV[kind]: FAKE_KEY})
        session = await daemon.client.new_session(workspace)
        with pytest.raises(ClientError) as err:
            await session.prompt("hello").wait()
        assert len(server.requests) == 1  # a refused key is not retried
    assert err.value.code == -32012
    assert KEY_ENV[kind] in err.value.message and "401" in err.value.message
    assert FAKE_KEY not in err.value.message
    assert err.value.data["kind"] == "auth"
    assert err.value.data["retryable"] is False and err.value.data["status"] == 401
    assert FAKE_KEY not in daemon.stderr()
