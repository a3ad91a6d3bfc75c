"""Bad input over real stdio: each gets its error code, and the daemon keeps serving."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path


async def _answer(daemon, predicate, timeout: float = 10.0) -> dict:
    """Wait for a message the client did not ask for (parse errors, raw requests)."""
    peer = daemon.client.peer
    async with asyncio.timeout(timeout):
        while True:
            for message in peer.received:
                if predicate(message):
                    peer.received.remove(message)
                    return message
            await asyncio.sleep(0.01)


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def _still_serving(daemon, workspace: Path) -> None:
    assert isinstance(await daemon.client.list_sessions(workspace), list)


@pytest.mark.parametrize(
    ("raw", "code", "says"),
    [
        (b"{not json", -32700, "not valid JSON"),
        (b"\xff\xfe garbage", -32700, "not UTF-8 (byte 0xff at offset 0); send JSON-RPC messages as UTF-8"),
        (b'{"text": "caf\xe9"}', -32700, "not UTF-8 (byte 0xe9 at offset 13)"),
        (b"[1, 2]", -32600, "batch"),
        (b'"just a string"', -32600, "not an object"),
        (b'{"id": 41, "method": "session/list"}', -32600, '"jsonrpc" must be "2.0"'),
        (b'{"jsonrpc": "2.0", "id": 42}', -32600, "no method"),
        (b'{"jsonrpc": "2.0", "id": 43, "method": 7}', -32600, "method must be a string"),
        (b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "session/list"}', -32600, "id must be"),
    ],
)
async def test_malformed_messages_get_their_error_and_the_daemon_goes_on(
    spawn_daemon, workspace: Path, raw: bytes, code: int, says: str
):
    daemon = await spawn_daemon()
    daemon.client.peer.send_raw(_frame(raw))
    error = await _answer(daemon, lambda m: "error" in m)
    assert error["error"]["code"] == code
    assert says in error["error"]["message"]
    assert error["id"] in (None, 41, 42, 43)
    await _still_serving(daemon, workspace)


async def test_a_frame_without_content_length_is_a_parse_error(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon()
    daemon.client.peer.send_raw(b"Content-Type: application/json\r\n\r\n")
    error = await _answer(daemon, lambda m: "error" in m)
    assert error["error"]["code"] == -32700 and "Content-Length" in error["error"]["message"]
    await _still_serving(daemon, workspace)


@pytest.mark.parametrize(
    ("method", "params", "code", "says"),
    [
        ("no/such/method", {}, -32601, "method not found: no/such/method"),
        ("session/prompt", {"sessionId": 5, "prompt": []}, -32602, "sessionId"),
        ("session/prompt", {"sessionId": "s"}, -32602, "prompt"),
        ("session/new", None, -32602, "cwd"),  # params missing entirely
        ("session/new", [1, 2], -32602, "must be an object"),
        ("session/prompt", {"sessionId": "s", "prompt": [{"type": "image"}]}, -32602, "image"),
        ("session/set_mode", {"sessionId": "s", "modeId": "yolo"}, -32602, "read-only"),
        (
            "session/set_mode",
            {"sessionId": "s"},
            -32602,
            "session/set_mode: params.modeId: required field missing; send one of: read-only",
        ),
        ("_tether/rules/list", {}, -32602, "invalid params for _tether/rules/list: sessionId"),
        ("textDocument/codeAction", {}, -32602, "invalid params for textDocument/codeAction"),
        (
            "session/prompt",
            {"sessionId": "s", "prompt": [], "_meta": {"tether": {"steer": "yes"}}},
            -32602,
            "session/prompt: prompt is an empty list; send at least one content block",
        ),
    ],
)
async def test_bad_requests_get_exactly_one_error_naming_the_problem(
    spawn_daemon, workspace: Path, method: str, params, code: int, says: str
):
    daemon = await spawn_daemon()
    message = {"jsonrpc": "2.0", "id": 77, "method": method}
    if params is not None:
        message["params"] = params
    daemon.client.peer.send_raw(_frame(json.dumps(message).encode()))
    error = await _answer(daemon, lambda m: m.get("id") == 77)
    assert error["error"]["code"] == code
    assert says in error["error"]["message"]
    assert "Traceback" not in json.dumps(error)
    await _still_serving(daemon, workspace)
    assert not [m for m in daemon.client.peer.received if m.get("id") == 77]  # exactly one


async def test_unknown_notifications_are_ignored_quietly(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon()
    daemon.client.peer.notify("$/setTrace", {"value": "off"})
    daemon.client.peer.notify("something/else", {})
    await _still_serving(daemon, workspace)
    assert daemon.client.peer.received == []


async def test_initialize_twice_is_refused(spawn_daemon):
    daemon = await spawn_daemon()
    from tether_client import ClientError

    with pytest.raises(ClientError) as err:
        await daemon.client.initialize()
    assert err.value.code == -32600 and "already" in err.value.message


async def test_bad_initialization_options_name_the_key(spawn_daemon):
    daemon = await spawn_daemon(initialize=False)
    from tether_client import ClientError

    with pytest.raises(ClientError) as err:
        await daemon.client.initialize(initializationOptions={"maxSteps": "ten"})
    assert err.value.code == -32013 and "max_steps" in err.value.message
    # a corrected initialize then works
    result = await daemon.client.initialize(initializationOptions={"maxSteps": 3})
    assert result["protocolVersion"] == 1
