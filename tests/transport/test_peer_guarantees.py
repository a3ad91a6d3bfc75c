"""One regression test per guarantee of the daemon's JSON-RPC peer, each a behaviour of
pygls 2.1.1 (the daemon's former base) that a client saw go wrong.

See daemon/tether/transport/__init__.py for the list.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import TYPE_CHECKING

import pytest

from daemon_harness import kinds

if TYPE_CHECKING:
    from pathlib import Path


async def _answer(daemon, msg_id, timeout: float = 10.0) -> dict:
    peer = daemon.client.peer
    async with asyncio.timeout(timeout):
        while True:
            for message in peer.received:
                if message.get("id") == msg_id:
                    peer.received.remove(message)
                    return message
            await asyncio.sleep(0.01)


async def _stats(daemon) -> dict:
    return await daemon.client.request("_tether/daemon/stats", {})


async def test_params_keep_keys_a_namedtuple_would_lose_and_nested_jsonrpc_objects(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon()
    session = await daemon.client.new_session(workspace)
    meta = {
        "class": 1,
        "my-key": 2,
        "stored": {"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": {}},
    }
    turn = session.prompt([{"type": "text", "text": "hello", "_meta": meta}])
    await turn.wait()
    assert turn.stop_reason == "end_turn"
    other = await spawn_daemon()
    loaded = await other.client.load_session(session.id, workspace)
    assert loaded.updates[0]["content"]["_meta"] == meta


async def test_finished_notification_handlers_are_not_kept(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon()
    session = await daemon.client.new_session(workspace)
    for _ in range(2000):
        daemon.client.peer.notify("session/cancel", {"sessionId": session.id})
    stats = await _stats(daemon)
    await asyncio.sleep(0.05)
    stats = await _stats(daemon)
    assert stats["backgroundTasks"] == 0 and stats["runningRequests"] == 0


async def test_a_late_reply_to_an_abandoned_request_is_ignored_not_shown(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon()
    daemon.client.peer.send({"jsonrpc": "2.0", "id": "tether-999", "result": {"outcome": "late"}})
    daemon.client.peer.send({"jsonrpc": "2.0", "id": "tether-998", "error": {"code": 1, "message": "x"}})
    stats = await _stats(daemon)
    assert stats["unknownResponses"] == 2
    assert daemon.client.notifications == []  # no window/showMessage
    assert daemon.client.peer.received == []


async def test_internal_errors_carry_a_log_reference_not_a_traceback(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon(env={"TETHER_FAILPOINTS": "session/list"})
    daemon.client.peer.send({"jsonrpc": "2.0", "id": 5, "method": "session/list", "params": {}})
    error = (await _answer(daemon, 5))["error"]
    assert error["code"] == -32603
    assert "ref " in error["message"] and "daemon log" in error["message"]
    assert "data" not in error and "Traceback" not in json.dumps(error)
    assert daemon.client.notifications == []  # nothing pushed at the user
    ref = error["message"].split("ref ")[1].split(";")[0]
    log = daemon.stderr()
    assert f"ref {ref}" in log and "Traceback" in log
    # and the daemon keeps serving other methods
    assert (await daemon.client.new_session(workspace)).id


async def test_many_frames_leave_in_few_writes(spawn_daemon, workspace: Path, tmp_path: Path):
    script = tmp_path / "many.json"
    script.write_text(json.dumps({"replies": [{"repeat": {"chunk": "abcd", "count": 2000}}]}))
    daemon = await spawn_daemon(script=script)
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("go")
    updates = [u async for u in turn]
    assert (
        "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk") == "abcd" * 2000
    )
    stats = await _stats(daemon)
    assert stats["writes"] < stats["framesWritten"]


@pytest.mark.parametrize("level", ["info", "debug"])
async def test_message_bodies_are_not_logged(spawn_daemon, workspace: Path, level: str):
    """Not what the user typed, nor what a tool read (a key in a file), even at debug:
    there the libraries' own debug lines would carry every SQL parameter."""
    (workspace / "README.md").write_text("# Sample\n\nAPI_KEY=sk-FILE-91c2e\n")
    daemon = await spawn_daemon("--log-level", level)
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("read the README, MARKER-7f3a2")
    assert "sk-FILE-91c2e" in str([u async for u in turn])  # the file was read and shown
    daemon.client.peer.notify("$/tether/noSuchNotification", {})
    await daemon.client.new_session(workspace)  # the notification was handled before this answer
    log = daemon.stderr()
    assert "MARKER-7f3a2" not in log and "sk-FILE-91c2e" not in log
    # tether's own lines are there at the level asked for
    assert ("ignoring notification $/tether/noSuchNotification" in log) is (level == "debug")


async def test_protocol_runs_on_private_fds_children_cannot_reach(spawn_daemon):
    daemon = await spawn_daemon()
    fd0 = os.readlink(f"/proc/{daemon.pid}/fd/0")
    fd1 = os.readlink(f"/proc/{daemon.pid}/fd/1")
    fd2 = os.readlink(f"/proc/{daemon.pid}/fd/2")
    assert fd0 == "/dev/null"
    assert fd1 == fd2  # stdout is the log stream, not the client's pipe
    # the protocol still flows (over the duplicated descriptors)
    assert (await _stats(daemon))["framing"] == "lsp"


async def test_replay_reports_update_kinds_in_order(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon()
    session = await daemon.client.new_session(workspace)
    await session.prompt("read the README").wait()
    other = await spawn_daemon()
    loaded = await other.client.load_session(session.id, workspace)
    assert kinds(loaded.updates)[0] == "user_message_chunk"
