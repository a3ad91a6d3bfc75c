"""The limit on one JSON-RPC message, through the real daemon on stdio in both framings: a
message over it is answered with `-32600` and `id: null`, its bytes are skipped, and the next
request on the same connection is answered; one at the limit is taken.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from daemon_harness import serve_command
from message_frames import INIT, LIMIT, STATS, assert_refused, by_id, lsp, lsp_bodies, padded


async def _serve(env: dict, cwd: Path, payload: bytes) -> bytes:
    proc = await asyncio.create_subprocess_exec(
        *serve_command(), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env, cwd=cwd,
    )
    out, _err = await asyncio.wait_for(proc.communicate(payload), 120)
    assert proc.returncode == 0
    return out


async def test_ndjson_line_over_the_limit_is_refused_and_the_next_request_answered(daemon_env, workspace: Path):
    over = padded({"jsonrpc": "2.0", "id": 2, "method": "_tether/daemon/stats", "params": {}}, LIMIT + 1)
    payload = json.dumps(INIT).encode() + b"\n" + over + b"\n" + json.dumps(STATS).encode() + b"\n"
    answers = by_id([json.loads(line) for line in (await _serve(daemon_env, workspace, payload)).splitlines()])
    assert_refused(answers[None], LIMIT + 1)
    assert answers[3]["result"]["framing"] == "ndjson"


async def test_lsp_frame_over_the_limit_is_refused_and_the_next_request_answered(daemon_env, workspace: Path):
    over = padded({"jsonrpc": "2.0", "id": 2, "method": "_tether/daemon/stats", "params": {}}, LIMIT + 1)
    payload = lsp(json.dumps(INIT).encode()) + lsp(over) + lsp(json.dumps(STATS).encode())
    answers = by_id(lsp_bodies(await _serve(daemon_env, workspace, payload)))
    assert_refused(answers[None], LIMIT + 1)
    assert answers[3]["result"]["framing"] == "lsp"


async def test_messages_at_the_limit_are_taken_in_both_framings(daemon_env, workspace: Path):
    at_limit = padded({"jsonrpc": "2.0", "id": 2, "method": "_tether/daemon/stats", "params": {}}, LIMIT)
    lsp_answers = lsp_bodies(await _serve(daemon_env, workspace, lsp(json.dumps(INIT).encode()) + lsp(at_limit)))
    assert sorted(a["id"] for a in lsp_answers) == [1, 2] and all("result" in a for a in lsp_answers), lsp_answers
    ndjson = await _serve(daemon_env, workspace, json.dumps(INIT).encode() + b"\n" + at_limit + b"\n")
    answers = [json.loads(line) for line in ndjson.splitlines()]
    assert sorted(a["id"] for a in answers) == [1, 2] and all("result" in a for a in answers), answers


async def test_a_prompt_at_max_message_mib_escaped_at_worst_fits_in_one_frame(daemon_env, workspace: Path):
    # 8 MiB of control characters is 48 MiB of JSON (`\u0001` each): the framing must take it,
    # so that the prompt's own check (SPEC §3.12) is what answers, naming its field.
    new = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(workspace), "mcpServers": []}}
    prompt = {"jsonrpc": "2.0", "id": 4, "method": "session/prompt",
              "params": {"sessionId": "sess_unknown", "prompt": [{"type": "text", "text": "\x01" * ((8 << 20) + 1)}]}}
    body = json.dumps(prompt).encode()
    assert len(body) > 48 << 20
    payload = b"".join(json.dumps(m).encode() + b"\n" for m in (INIT, new)) + body + b"\n"
    answers = {a.get("id"): a for a in map(json.loads, (await _serve(daemon_env, workspace, payload)).splitlines())}
    assert answers[4]["error"]["code"] == -32602, answers[4]
    assert "max_message_mib" in answers[4]["error"]["message"]


async def test_an_absurd_content_length_is_a_bad_header_and_the_next_frame_is_read(daemon_env, workspace: Path):
    # 15 digits: skipping that many bytes would swallow the connection, so only the header goes
    payload = lsp(json.dumps(INIT).encode()) + b"Content-Length: 999999999999999\r\n\r\n" + lsp(json.dumps(STATS).encode())
    answers = by_id(lsp_bodies(await _serve(daemon_env, workspace, payload)))
    assert answers[None]["error"]["code"] == -32700
    assert "Content-Length" in answers[None]["error"]["message"]
    assert answers[3]["result"]["framing"] == "lsp"


async def test_an_over_limit_frame_sent_in_pieces_is_skipped_to_its_last_byte(daemon_env, workspace: Path):
    # the skipped body arrives over many reads; the frame right after it must decode whole
    proc = await asyncio.create_subprocess_exec(
        *serve_command(), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=daemon_env, cwd=workspace,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(lsp(json.dumps(INIT).encode()) + b"Content-Length: %d\r\n\r\n" % (LIMIT + 7))
    piece = b" " * (1 << 20)
    for _ in range(LIMIT >> 20):
        proc.stdin.write(piece)
        await proc.stdin.drain()
    proc.stdin.write(b"{}     " + lsp(json.dumps(STATS).encode()))
    proc.stdin.close()  # (communicate() without input leaves stdin open)
    out, _err = await asyncio.wait_for(proc.communicate(), 120)
    answers = by_id(lsp_bodies(out))
    assert_refused(answers[None], LIMIT + 7)
    assert answers[3]["result"]["framing"] == "lsp"


async def test_a_bad_header_loses_none_of_the_messages_read_with_it(daemon_env, workspace: Path):
    # one read holding a good frame, a bad header and another good frame: all three are answered
    stats = lsp(json.dumps(STATS).encode())
    payload = lsp(json.dumps(INIT).encode()) + stats + b"Content-Length: x\r\n\r\n" + stats.replace(b'"id": 3', b'"id": 4')
    answers = {a["id"]: a for a in lsp_bodies(await _serve(daemon_env, workspace, payload))}
    assert sorted(answers, key=str) == sorted([1, 3, None, 4], key=str), answers
    assert answers[None]["error"]["code"] == -32700
    assert answers[3]["result"]["framing"] == answers[4]["result"]["framing"] == "lsp"
