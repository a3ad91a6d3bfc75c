"""Record a real HTTP exchange to a cassette, then replay it with no server at all.

Recording wraps the real adapter (`RecordingProvider`) while it talks to
`LocalHTTPServer`; replay (`ReplayProvider.from_file`) runs the same adapter over a
transport that answers from the cassette. Checked: the file's shape (a header line, one
line per HTTP exchange) and that no credential reaches it; that replay yields the very
same events; that a request which differs from the recorded one fails with a unified
diff naming the field; that one call too many fails clearly; that recorded retries
replay without their waits; and, end to end, `tether serve --record` then
`tether serve --provider replay --cassette` giving the client the same turn.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import pytest
from local_http import LocalHTTPServer, Reply, json_reply, sse

from tether.providers.anthropic import AnthropicProvider
from tether.providers.base import (
    ModelRequest,
    Provider,
    ProviderError,
    ProviderEvent,
    TextDelta,
)
from tether.providers.http import RetryPolicy
from tether.providers.openai import OpenAIProvider
from tether.providers.record import RecordingProvider
from tether.providers.replay import ReplayProvider
from tether_protocol.conversation import messages_from_json

if TYPE_CHECKING:
    from pathlib import Path

PROVIDERS = ["openai", "anthropic"]
FAKE_KEY = "sk-cassette-SECRET-4f2a9"  # grep the cassette for it
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
MODELS = {"openai": "gpt-4.1", "anthropic": "claude-sonnet-4-5"}
CALL_ID = {"openai": "call_rr_1", "anthropic": "toolu_rr_1"}
FAST = RetryPolicy(base_s=0.001, max_backoff_s=0.01)
PROMPT = "What does the README say?"
README = "# Sample\n\nHello from the sample workspace.\n"
TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file in the workspace.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }
]


# ---- literal streams ---------------------------------------------------------------------


def _oa(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-rr",
        "object": "chat.completion.chunk",
        "created": 1750000000,
        "model": "m",
        "choices": [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}],
    }


_OA_USAGE = {
    "id": "chatcmpl-rr",
    "object": "chat.completion.chunk",
    "created": 1750000000,
    "model": "m",
    "choices": [],
    "usage": {"prompt_tokens": 80, "completion_tokens": 7, "total_tokens": 87},
}


def _an(events: list[dict[str, Any]]) -> list[bytes | float]:
    head = {
        "type": "message_start",
        "message": {
            "id": "msg_rr",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": "m",
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 80, "output_tokens": 1},
        },
    }
    events = [head, *events, {"type": "message_stop"}]
    return sse(*events, event_names=[e["type"] for e in events])


def tool_reply(kind: str) -> Reply:
    if kind == "openai":
        return Reply(
            chunks=sse(
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
                _oa({"tool_calls": [{"index": 0, "function": {"arguments": '{"path": '}}]}),
                _oa({"tool_calls": [{"index": 0, "function": {"arguments": '"README.md"}'}}]}),
                _oa(finish="tool_calls"),
                _OA_USAGE,
                "[DONE]",
            )
        )
    return Reply(
        chunks=_an(
            [
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "tool_use", "id": CALL_ID[kind], "name": "read_file", "input": {}},
                },
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": '{"path": '},
                },
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": '"README.md"}'},
                },
                {"type": "content_block_stop", "index": 0},
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                    "usage": {"output_tokens": 7},
                },
            ]
        )
    )


def text_reply(kind: str, *texts: str) -> Reply:
    if kind == "openai":
        return Reply(
            chunks=sse(
                _oa({"role": "assistant", "content": ""}),
                *(_oa({"content": t}) for t in texts),
                _oa(finish="stop"),
                _OA_USAGE,
                "[DONE]",
            )
        )
    return Reply(
        chunks=_an(
            [
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                *(
                    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}
                    for t in texts
                ),
                {"type": "content_block_stop", "index": 0},
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": 7},
                },
            ]
        )
    )


# ---- the two steps of a turn, as the agent loop would send them ------------------------------


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def step_request(kind: str, step: int, prompt: str = PROMPT) -> ModelRequest:
    messages = [user(prompt)]
    if step == 2:
        messages += [
            {
                "role": "assistant",
                "text": "",
                "tool_calls": [{"id": CALL_ID[kind], "name": "read_file", "arguments": {"path": "README.md"}}],
            },
            {"role": "tool", "tool_call_id": CALL_ID[kind], "name": "read_file", "content": README, "is_error": False},
        ]
    return ModelRequest(
        system="You are Tether.",
        messages=messages_from_json(messages),
        tools=TOOLS,
        dynamic_context="Workspace root: /ws",
        step=step,
    )


def make(kind: str, server: LocalHTTPServer, **kw: Any) -> Provider:
    if kind == "openai":
        return OpenAIProvider(model=MODELS[kind], base_url=server.url + "/v1", api_key=FAKE_KEY, retry=FAST, **kw)
    return AnthropicProvider(model=MODELS[kind], base_url=server.url, api_key=FAKE_KEY, retry=FAST, **kw)


async def events_of(provider: Provider, request: ModelRequest) -> list[ProviderEvent]:
    return [event async for event in provider.stream(request)]


async def record_two_steps(kind: str, cassette: Path) -> tuple[list[list[ProviderEvent]], LocalHTTPServer]:
    async with LocalHTTPServer() as server:
        server.queue(tool_reply(kind), text_reply(kind, "The README ", "says hello."))
        recorder = RecordingProvider(make(kind, server), cassette)
        try:
            steps = [await events_of(recorder, step_request(kind, n)) for n in (1, 2)]
        finally:
            await recorder.aclose()
    return steps, server


# ---- record ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_cassette_has_a_header_one_line_per_exchange_and_no_credentials(tmp_path: Path, kind: str) -> None:
    cassette = tmp_path / "turn.cassette"
    steps, server = await record_two_steps(kind, cassette)
    assert "".join(e.text for e in steps[1] if isinstance(e, TextDelta)) == "The README says hello."
    # The key did go out on the wire...
    sent = server.requests[0].headers
    assert sent.get("authorization") == f"Bearer {FAKE_KEY}" or sent.get("x-api-key") == FAKE_KEY

    raw = cassette.read_text(encoding="utf-8")
    lines = raw.splitlines()
    assert len(lines) == 3
    header = json.loads(lines[0])
    assert header["cassette"] == 1 and header["provider"] == kind and header["model"] == MODELS[kind]
    assert header["base_url"].startswith(server.url)
    exchanges = [json.loads(line) for line in lines[1:]]
    for exchange, seen in zip(exchanges, server.requests, strict=True):
        assert exchange["request"] == seen.body  # exactly what the server received
        assert exchange["status"] == 200
        assert exchange["headers"] == {"content-type": "text/event-stream"}
        assert exchange["chunks"] and all(len(c) == 2 for c in exchange["chunks"])
    # ...but nothing of it reached the file: no header name, no key, not even part of it.
    lowered = raw.lower()
    assert "authorization" not in lowered and "x-api-key" not in lowered and "bearer" not in lowered
    assert FAKE_KEY.lower() not in lowered and "secret-4f2a9" not in lowered


# ---- replay ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_replay_without_a_server_gives_the_same_events(tmp_path: Path, kind: str) -> None:
    cassette = tmp_path / "turn.cassette"
    recorded, _server = await record_two_steps(kind, cassette)  # the server is gone now
    replay = ReplayProvider.from_file(cassette)
    try:
        replayed = [await events_of(replay, step_request(kind, n)) for n in (1, 2)]
    finally:
        await replay.aclose()
    assert replayed == recorded
    assert replay.model == MODELS[kind]


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_a_changed_request_fails_with_a_diff_naming_the_field(tmp_path: Path, kind: str) -> None:
    cassette = tmp_path / "turn.cassette"
    await record_two_steps(kind, cassette)
    replay = ReplayProvider.from_file(cassette)
    try:
        with pytest.raises(ProviderError) as err:
            await events_of(replay, step_request(kind, 1, prompt="What does the LICENSE say?"))
    finally:
        await replay.aclose()
    message = str(err.value)
    assert err.value.kind == "replay_mismatch" and not err.value.retryable
    assert "request 1 differs" in message and str(cassette) in message
    lines = message.splitlines()
    assert "--- recorded" in lines and "+++ sent" in lines
    field = '"content":' if kind == "openai" else '"text":'  # openai flattens a text-only message
    removed = [ln for ln in lines if ln.startswith("-") and not ln.startswith("---")]
    added = [ln for ln in lines if ln.startswith("+") and not ln.startswith("+++")]
    assert any(field in ln and "README say?" in ln for ln in removed), message
    assert any(field in ln and "LICENSE say?" in ln for ln in added), message


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_more_calls_than_recorded_is_a_clear_error(tmp_path: Path, kind: str) -> None:
    cassette = tmp_path / "turn.cassette"
    await record_two_steps(kind, cassette)
    replay = ReplayProvider.from_file(cassette)
    try:
        for n in (1, 2):
            await events_of(replay, step_request(kind, n))
        with pytest.raises(ProviderError) as err:
            await events_of(replay, step_request(kind, 2))
    finally:
        await replay.aclose()
    assert err.value.kind == "replay_mismatch" and not err.value.retryable
    assert "no more recorded exchanges" in str(err.value) and "served 2" in str(err.value)
    assert "record it again" in str(err.value)


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_a_recorded_retry_replays_without_its_wait(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio

    waits: list[float] = []
    real_sleep = anyio.sleep

    async def recording_sleep(seconds: float) -> None:
        waits.append(seconds)
        await real_sleep(seconds)

    monkeypatch.setattr(anyio, "sleep", recording_sleep)
    cassette = tmp_path / "retry.cassette"
    async with LocalHTTPServer() as server:
        server.queue(
            json_reply(
                429, {"error": {"message": "slow down", "type": "rate_limit_error"}}, headers={"retry-after-ms": "400"}
            ),
            text_reply(kind, "after ", "the wait"),
        )
        recorder = RecordingProvider(make(kind, server), cassette)
        try:
            recorded = await events_of(recorder, step_request(kind, 1))
        finally:
            await recorder.aclose()
        assert 0.4 in waits  # the live retry waited as the server asked
    exchanges = [json.loads(line) for line in cassette.read_text().splitlines()[1:]]
    assert [e["status"] for e in exchanges] == [429, 200]
    assert exchanges[0]["headers"]["retry-after-ms"] == "400"

    replay = ReplayProvider.from_file(cassette)
    waits.clear()
    try:
        assert await events_of(replay, step_request(kind, 1)) == recorded
    finally:
        await replay.aclose()
    assert all(w == 0 for w in waits)  # the replayed retry does not wait


# ---- end to end: tether serve --record, then --provider replay --------------------------------


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_daemon_records_then_replays_the_same_turn(
    spawn_daemon, workspace: Path, tmp_path: Path, kind: str
) -> None:
    from daemon_harness import kinds, text_of

    cassette = tmp_path / f"{kind}.cassette"
    async with LocalHTTPServer() as server:
        server.queue(tool_reply(kind), text_reply(kind, "The README ", "says hello."))
        base = server.url + ("/v1" if kind == "openai" else "")
        recording = await spawn_daemon(
            command=[
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
                "--record",
                str(cassette),
            ],
            env={KEY_ENV[kind]: FAKE_KEY},
        )
        session = await recording.client.new_session(workspace)
        first = session.prompt(PROMPT)
        live = [u async for u in first]
        await recording.client.close()
    assert first.stop_reason == "end_turn" and len(server.requests) == 2
    assert FAKE_KEY not in cassette.read_text()

    # No server any more; a fresh session in the same workspace (the workspace path is
    # part of the system prompt) and the same first message.
    replaying = await spawn_daemon(
        command=[sys.executable, "-m", "tether", "serve", "--provider", "replay", "--cassette", str(cassette)],
    )
    fresh = await replaying.client.new_session(workspace)
    assert fresh.id != session.id
    second = fresh.prompt(PROMPT)
    replayed = [u async for u in second]
    assert second.stop_reason == "end_turn"
    assert kinds(replayed) == kinds(live)
    assert text_of(replayed) == text_of(live) == "The README says hello."
    done = [u for u in replayed if u.get("status") == "completed"]
    assert len(done) == 1 and "Hello from the sample workspace." in done[0]["content"][0]["content"]["text"]
