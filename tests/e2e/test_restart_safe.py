"""Sessions that survive the daemon being killed: waiting approvals resume, partial
output is kept and shown as interrupted."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import sqlite3
import weakref
from contextlib import closing
from typing import TYPE_CHECKING

import pytest

from daemon_harness import EXAMPLES, User, until
from tether_client import ClientError

if TYPE_CHECKING:
    from pathlib import Path

SCRIPT = EXAMPLES / "approvals.json"


async def kill9(daemon) -> None:
    os.kill(daemon.pid, signal.SIGKILL)
    await daemon.client.process.wait()


async def test_a_turn_waiting_for_approval_survives_kill_9_and_resumes_where_it_stopped(spawn_daemon, workspace: Path):
    first_user = User(never=True)
    first = await spawn_daemon(script=SCRIPT)
    first.client.peer.on_request = first_user.on_request
    session = await first.client.new_session(workspace)
    turn = session.prompt("edit the readme")
    turn.start()
    await until(lambda: first_user.prompts)
    await kill9(first)

    second_user = User("allow_once")
    second = await spawn_daemon(script=SCRIPT)
    second.client.peer.on_request = second_user.on_request
    loaded = await second.client.load_session(session.id, workspace)
    replayed_edit = [u for u in loaded.updates if u.get("toolCallId") == "call_edit"]
    assert replayed_edit[0]["status"] == "pending"  # shown as waiting, not failed
    await until(lambda: any(u.get("_meta", {}).get("tether", {}).get("turnEnded") for u in loaded.updates))

    # asked again for the same call, then the edit ran and the turn went on
    assert [p["toolCall"]["toolCallId"] for p in second_user.prompts] == ["call_edit"]
    assert (workspace / "README.md").read_text() == "# Sample\n\nHello, edited by Tether.\n"
    ended = [u for u in loaded.updates if u.get("_meta", {}).get("tether", {}).get("turnEnded")][-1]
    assert ended["_meta"]["tether"]["turnEnded"]["stopReason"] == "end_turn"
    live_text = "".join(
        u["content"]["text"]
        for u in loaded.updates[len(replayed_edit) and loaded.updates.index(replayed_edit[-1]) + 1 :]
        if u["sessionUpdate"] == "agent_message_chunk"
    )
    # only the step after the approval streamed: the finished steps were not re-run
    assert live_text == "Done."

    third = await spawn_daemon(script=SCRIPT)
    again = await third.client.load_session(session.id, workspace)
    edit = [u for u in again.updates if u.get("toolCallId") == "call_edit"][-1]
    assert edit["status"] == "completed"


async def test_a_turn_killed_while_streaming_keeps_its_partial_output_marked_interrupted(
    spawn_daemon, workspace: Path, tmp_path: Path, tether_home: Path
):
    script = tmp_path / "slow.json"
    script.write_text(json.dumps({"replies": [{"text": "word " * 200, "delay_ms": 20}]}))
    daemon = await spawn_daemon(script=script)
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("talk slowly")
    turn.start()
    await until(
        lambda: (
            len("".join(u["content"]["text"] for u in turn.updates if u["sessionUpdate"] == "agent_message_chunk"))
            > 60 * 5
        )
    )
    await asyncio.sleep(0.7)  # past a partial-output checkpoint (every 0.5 s)
    shown = "".join(u["content"]["text"] for u in turn.updates if u["sessionUpdate"] == "agent_message_chunk")
    await kill9(daemon)

    other = await spawn_daemon(script=script)
    loaded = await other.client.load_session(session.id, workspace)
    kept = [u for u in loaded.updates if u["sessionUpdate"] == "agent_message_chunk"]
    assert kept and kept[-1]["_meta"]["tether"]["status"] == "interrupted"
    assert len(kept[-1]["content"]["text"]) >= 60 * 5
    assert shown.startswith(kept[-1]["content"]["text"][:300])
    (db,) = list(tether_home.rglob("history.sqlite3"))
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert conn.execute("SELECT status FROM turns").fetchall() == [("interrupted",)]
    conn.close()


async def test_a_turn_killed_before_any_output_was_saved_shows_it_was_interrupted(
    spawn_daemon, workspace: Path, tmp_path: Path
):
    """Partial output is saved every 0.5 s (no database write per event): killed sooner,
    nothing of the answer is kept, but the replay still says the turn stopped there, and
    the session goes on (the model is not sent an empty answer)."""
    script = tmp_path / "slow.json"
    script.write_text(json.dumps({"replies": [{"text": "word " * 200, "delay_ms": 20}, {"text": "Back."}]}))
    daemon = await spawn_daemon(script=script)
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("talk slowly")
    turn.start()
    await until(lambda: any(u["sessionUpdate"] == "agent_message_chunk" for u in turn.updates))
    await kill9(daemon)

    other = await spawn_daemon(script=script)
    loaded = await other.client.load_session(session.id, workspace)
    shown = [(u["sessionUpdate"], u["content"].get("text"), u.get("_meta", {}).get("tether")) for u in loaded.replay]
    assert shown == [
        ("user_message_chunk", "talk slowly", None),
        (
            "agent_message_chunk",
            "\n[interrupted: Tether stopped before this turn finished]\n",
            {"notice": True, "status": "interrupted"},
        ),
    ]
    again = loaded.prompt("are you there?")
    await again.wait()
    assert again.stop_reason == "end_turn"


async def test_a_live_daemons_waiting_turn_is_not_resumed_or_joined_by_another_daemon(
    spawn_daemon, workspace: Path, tether_home: Path
):
    first_user = User(never=True)
    first = await spawn_daemon(script=SCRIPT)
    first.client.peer.on_request = first_user.on_request
    session = await first.client.new_session(workspace)
    turn = session.prompt("edit the readme")
    turn.start()
    await until(lambda: first_user.prompts)

    second_user = User("allow_once")
    second = await spawn_daemon(script=SCRIPT)
    second.client.peer.on_request = second_user.on_request
    loaded = await second.client.load_session(session.id, workspace)
    # shown as it stands in the first daemon: waiting there, not failed
    (edit,) = [u for u in loaded.updates if u.get("toolCallId") == "call_edit"]
    assert edit["status"] == "pending"
    notices = [u["content"]["text"] for u in loaded.updates if u.get("_meta", {}).get("tether", {}).get("notice")]
    assert any(f"another Tether process (pid {first.pid})" in n and "approvals are asked there" in n for n in notices)
    # a prompt here would interleave its messages with the first daemon's turn
    with pytest.raises(ClientError) as busy:
        await second.client.request(
            "session/prompt", {"sessionId": session.id, "prompt": [{"type": "text", "text": "hi"}]}
        )
    assert busy.value.code == -32010 and f"pid {first.pid}" in busy.value.message
    await asyncio.sleep(0.5)
    assert second_user.prompts == []  # the first daemon still owns the turn
    assert "Hello from the sample workspace." in (workspace / "README.md").read_text()
    (db,) = list(tether_home.rglob("history.sqlite3"))
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT count(*) FROM turns").fetchone() == (1,)  # no second turn began

    # once the first daemon is gone, loading again there resumes the waiting turn
    await kill9(first)
    again = await second.client.load_session(session.id, workspace)
    await until(lambda: second_user.prompts)
    await until(lambda: any(u.get("_meta", {}).get("tether", {}).get("turnEnded") for u in again.updates))
    assert (workspace / "README.md").read_text() == "# Sample\n\nHello, edited by Tether.\n"


async def test_a_prompt_during_a_resumed_turn_says_how_that_turn_ends(spawn_daemon, workspace: Path):
    first_user = User(never=True)
    first = await spawn_daemon(script=SCRIPT)
    first.client.peer.on_request = first_user.on_request
    session = await first.client.new_session(workspace)
    session.prompt("edit the readme").start()
    await until(lambda: first_user.prompts)
    await kill9(first)

    second_user = User(never=True)
    second = await spawn_daemon(script=SCRIPT)
    second.client.peer.on_request = second_user.on_request
    await second.client.load_session(session.id, workspace)
    await until(lambda: second_user.prompts)  # the resumed turn asks again
    with pytest.raises(ClientError) as busy:
        await second.client.request(
            "session/prompt", {"sessionId": session.id, "prompt": [{"type": "text", "text": "hi"}]}
        )
    assert busy.value.code == -32010
    assert "resuming the turn that was waiting for approval" in busy.value.message
    assert "session/request_permission" in busy.value.message and "turnEnded" in busy.value.message


async def test_a_client_whose_daemon_dies_mid_turn_gets_a_clear_error_and_no_stray_warning(
    spawn_daemon, workspace: Path
):
    user = User(never=True)
    daemon = await spawn_daemon(script=SCRIPT)
    daemon.client.peer.on_request = user.on_request
    unhandled: list[dict] = []
    asyncio.get_running_loop().set_exception_handler(lambda _loop, context: unhandled.append(context))
    waited = (await daemon.client.new_session(workspace)).prompt("edit the readme")
    dropped = (await daemon.client.new_session(workspace)).prompt("edit the readme")
    waited.start()
    dropped.start()  # nobody waits for this one
    await until(lambda: user.prompts and dropped.updates)  # noqa: F821 (`del dropped` below: the test frees it)
    await kill9(daemon)

    with pytest.raises(ConnectionError, match="session/prompt: the daemon closed the connection"):
        await waited.wait()
    gone = weakref.ref(dropped)
    del dropped
    gc.collect()
    await asyncio.sleep(0)
    assert gone() is None  # an ended turn is not kept by the client
    assert [c["message"] for c in unhandled] == []  # its error was not left unretrieved
