"""Framing detection, the fast start, and initialize's combined LSP + ACP answer."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon_harness import serve_command
from tether_protocol import FramingError, LspFrameDecoder, NdjsonDecoder, detect_framing


def test_framing_is_told_from_the_first_bytes():
    assert detect_framing(b"Content-Length: 5\r\n") == "lsp"
    assert detect_framing(b"content-length: 5\r\n") == "lsp"
    assert detect_framing(b'  {"jsonrpc"') == "ndjson"
    assert detect_framing(b"Cont") is None  # not enough yet
    assert detect_framing(b"") is None


def test_lsp_decoder_handles_split_and_joined_frames():
    decoder = LspFrameDecoder()
    body = b'{"a":1}'
    frame = b"Content-Length: 7\r\n\r\n" + body
    assert decoder.feed(frame[:10]) == []
    assert decoder.feed(frame[10:] + frame) == [body, body]
    assert decoder.pending == 0


_HEADERS = [
    b"Content-Length: %d\r\n\r\n",
    b"content-length:%d\r\n\r\n",
    b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n",
    b"Content-Length:   %d  \r\nX-Other: 1\r\n\r\n",
]


@settings(max_examples=200, deadline=None)
@given(
    frames=st.lists(st.tuples(st.sampled_from(range(len(_HEADERS))), st.binary(max_size=40)), max_size=6),
    cuts=st.lists(st.integers(0, 400), max_size=5),
)
def test_lsp_frames_of_any_header_spelling_cut_anywhere_decode_whole(
    frames: list[tuple[int, bytes]], cuts: list[int]
) -> None:
    stream = b"".join(_HEADERS[h] % len(body) + body for h, body in frames)
    decoder = LspFrameDecoder()
    bodies: list[bytes] = []
    start = 0
    for cut in sorted(cuts) + [len(stream)]:
        bodies += decoder.feed(stream[start:max(start, cut)])
        start = max(start, cut)
    assert bodies == [body for _h, body in frames]
    assert decoder.pending == 0


def test_a_length_of_too_many_digits_is_a_framing_error_and_reading_goes_on():
    decoder = LspFrameDecoder()
    with pytest.raises(FramingError, match="Content-Length"):
        decoder.feed(b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n")
    assert decoder.feed(b"Content-Length: 2\r\n\r\n{}") == [b"{}"]


def test_ndjson_decoder_skips_blank_lines():
    decoder = NdjsonDecoder()
    assert decoder.feed(b'{"a":1}\n\n{"b"') == [b'{"a":1}']
    assert decoder.feed(b":2}\r\n") == [b'{"b":2}']


async def _exchange(env: dict, cwd: Path, payload: bytes, *extra: str) -> list[dict]:
    proc = await asyncio.create_subprocess_exec(
        *serve_command(*extra), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env, cwd=cwd,
    )
    out, _err = await asyncio.wait_for(proc.communicate(payload), 30)
    assert proc.returncode == 0
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _init(msg_id: int = 1, **params) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": params}


async def test_ndjson_clients_are_detected_and_answered_in_kind(daemon_env, workspace: Path):
    lines = [
        _init(protocolVersion=1, clientCapabilities={"fs": {"readTextFile": True}}),
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(workspace), "mcpServers": []}},
        {"jsonrpc": "2.0", "id": 3, "method": "_tether/daemon/stats", "params": {}},
    ]
    payload = b"".join(json.dumps(m).encode() + b"\n" for m in lines)
    # requests run concurrently, so answers may come in any order
    # (answers only: a session's slash command list follows its session/new answer)
    replies = sorted([r for r in await _exchange(daemon_env, workspace, payload) if "id" in r], key=lambda r: r["id"])
    assert [r["id"] for r in replies] == [1, 2, 3]
    init = replies[0]["result"]
    assert init["protocolVersion"] == 1
    assert init["agentCapabilities"]["loadSession"] is True
    assert set(init["agentCapabilities"]["sessionCapabilities"]) == {"list", "resume", "close", "delete"}
    assert init["agentInfo"]["name"] == "tether" and init["authMethods"] == []
    # a pure ACP client gets a strict ACP answer; the LSP half waits under _meta
    assert "capabilities" not in init and "serverInfo" not in init
    assert init["_meta"]["tether"]["lsp"]["serverInfo"]["name"] == "tether"
    assert replies[1].get("result", {}).get("modes", {}).get("currentModeId") == "ask", replies[1]
    assert replies[2]["result"]["framing"] == "ndjson"


async def test_initialize_answers_the_same_on_the_fast_path_and_the_full_server(daemon_env, workspace: Path):
    acp = _init(protocolVersion=1, clientInfo={"name": "t", "version": "1"})
    fast = await _exchange(daemon_env, workspace, json.dumps(acp).encode() + b"\n")
    # a first message that is not initialize sends everything through the full server
    late = [
        {"jsonrpc": "2.0", "method": "$/setTrace", "params": {"value": "off"}},
        acp,
    ]
    full = await _exchange(
        daemon_env, workspace, b"".join(json.dumps(m).encode() + b"\n" for m in late)
    )
    assert fast == full


async def test_an_unsupported_protocol_version_is_answered_with_ours(daemon_env, workspace: Path):
    replies = await _exchange(
        daemon_env, workspace, json.dumps(_init(protocolVersion=99)).encode() + b"\n"
    )
    assert replies[0]["result"]["protocolVersion"] == 1


async def test_a_config_error_at_start_names_the_flag_and_exits_2(daemon_env, workspace: Path):
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tether", "serve", "--mode", "yolo",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=daemon_env, cwd=workspace,
    )
    _out, err = await asyncio.wait_for(proc.communicate(b""), 30)
    assert proc.returncode == 2
    assert b"--mode" in err and b"full-auto" in err


async def test_lsp_exit_without_shutdown_exits_1_and_with_shutdown_0(daemon_env, workspace: Path):
    def frame(message: dict) -> bytes:
        body = json.dumps(message).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    for with_shutdown, code in ((False, 1), (True, 0)):
        messages = [_init(rootUri=workspace.as_uri(), capabilities={})]
        if with_shutdown:
            messages.append({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        messages.append({"jsonrpc": "2.0", "method": "exit"})
        proc = await asyncio.create_subprocess_exec(
            *serve_command(), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=daemon_env, cwd=workspace,
        )
        assert proc.stdin is not None
        proc.stdin.write(b"".join(frame(m) for m in messages))
        await proc.stdin.drain()
        assert await asyncio.wait_for(proc.wait(), 30) == code
        proc.stdin.close()
        await proc.communicate()


async def test_ndjson_bad_lines_get_parse_errors_and_nested_jsonrpc_objects_work(daemon_env, workspace: Path):
    lines = [
        json.dumps(_init(protocolVersion=1)).encode(),
        b"{this is not json",
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {
            "cwd": str(workspace), "mcpServers": [],
            "_meta": {"stored": {"jsonrpc": "2.0", "id": 99, "method": "session/prompt"}}}}).encode(),
    ]
    replies = await _exchange(daemon_env, workspace, b"\n".join(lines) + b"\n", "--framing", "ndjson")
    errors = [r for r in replies if "error" in r]
    assert len(errors) == 1 and errors[0]["id"] is None and errors[0]["error"]["code"] == -32700
    assert any(r.get("id") == 2 and "sessionId" in r.get("result", {}) for r in replies)


async def test_requests_that_open_a_workspace_together_still_let_the_daemon_exit(daemon_env, workspace: Path):
    # the first requests for a workspace arrive together (an editor pipelining at start)
    lines = [_init(protocolVersion=1)] + [
        {"jsonrpc": "2.0", "id": n, "method": method, "params": {"cwd": str(workspace), "mcpServers": []}}
        for n, method in ((2, "session/new"), (3, "session/new"), (4, "session/list"))
    ]
    payload = b"".join(json.dumps(m).encode() + b"\n" for m in lines)
    # (answers only: a session's slash command list follows its session/new answer)
    replies = sorted([r for r in await _exchange(daemon_env, workspace, payload) if "id" in r], key=lambda r: r["id"])
    assert [r["id"] for r in replies] == [1, 2, 3, 4] and all("result" in r for r in replies)
    assert replies[1]["result"]["sessionId"] != replies[2]["result"]["sessionId"]
