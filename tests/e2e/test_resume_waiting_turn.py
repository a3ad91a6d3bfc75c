"""`session/resume` of a session whose turn a killed daemon left waiting for approval
(SPEC §3.7, §5.14): not resumed, said once; a prompt is refused naming the two ways on
(`session/load` asks again, `session/cancel` drops the turn), and both work."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import pytest

from daemon_harness import EXAMPLES, User, left_waiting, until
from tether_client import ClientError

if TYPE_CHECKING:
    from pathlib import Path

SCRIPT = EXAMPLES / "approvals.json"
ORIGINAL = "# Sample\n\nHello from the sample workspace.\n"


def ended(updates: list[dict]) -> list[dict]:
    return [u["_meta"]["tether"]["turnEnded"] for u in updates if u.get("_meta", {}).get("tether", {}).get("turnEnded")]


def notices(updates: list[dict]) -> list[str]:
    return [u["content"]["text"] for u in updates if u.get("_meta", {}).get("tether", {}).get("notice")]


async def prompt_hi(daemon, session_id: str) -> dict:
    return await daemon.client.request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
    )


async def test_resume_does_not_resume_a_waiting_turn_and_a_later_load_asks_again(spawn_daemon, workspace: Path):
    session_id = await left_waiting(spawn_daemon, workspace)
    user = User("allow_once")
    second = await spawn_daemon(script=SCRIPT)
    second.client.peer.on_request = user.on_request

    resumed = await second.client.resume_session(session_id, workspace)
    await until(lambda: notices(resumed.updates))
    await asyncio.sleep(0.5)  # anything the turn would send comes right after the answer
    # nothing of the turn: no tool_call_update for a call this client was not shown, no question
    assert [u["sessionUpdate"] for u in resumed.updates] == ["agent_message_chunk"]
    (said,) = notices(resumed.updates)
    assert "waiting for approval" in said and "session/load" in said and "session/cancel" in said
    assert user.prompts == []

    # a prompt is refused, and the refusal names both ways on
    with pytest.raises(ClientError) as busy:
        await prompt_hi(second, session_id)
    assert busy.value.code == -32010
    assert "waiting for approval" in busy.value.message
    assert "session/load" in busy.value.message and "session/cancel" in busy.value.message

    # session/load: the call is shown as pending (not failed), asked again, and the turn ends
    loaded = await second.client.load_session(session_id, workspace)
    edit = [u for u in loaded.updates if u.get("toolCallId") == "call_edit"]
    assert edit[0]["sessionUpdate"] == "tool_call" and edit[0]["status"] == "pending"
    assert all(u.get("status") != "failed" for u in edit)
    await until(lambda: ended(loaded.updates))
    assert [p["toolCall"]["toolCallId"] for p in user.prompts] == ["call_edit"]
    assert ended(loaded.updates)[-1]["stopReason"] == "end_turn"
    assert (workspace / "README.md").read_text() == "# Sample\n\nHello, edited by Tether.\n"

    # and the session takes prompts again
    assert (await prompt_hi(second, session_id))["stopReason"] == "end_turn"


async def test_resume_then_cancel_drops_the_waiting_turn_and_the_session_goes_on(
    spawn_daemon, workspace: Path, tether_home: Path
):
    session_id = await left_waiting(spawn_daemon, workspace)
    user = User(never=True)
    second = await spawn_daemon(script=SCRIPT)
    second.client.peer.on_request = user.on_request
    resumed = await second.client.resume_session(session_id, workspace)
    with pytest.raises(ClientError) as busy:
        await prompt_hi(second, session_id)
    assert busy.value.code == -32010

    await resumed.cancel()
    await until(lambda: ended(resumed.updates))
    (end,) = ended(resumed.updates)
    assert end["stopReason"] == "cancelled"
    (closed,) = [u for u in resumed.updates if u.get("toolCallId") == "call_edit"]
    assert closed["status"] == "failed" and "not run" in closed["content"][0]["content"]["text"]

    assert (await prompt_hi(second, session_id))["stopReason"] == "end_turn"
    assert user.prompts == []
    assert (workspace / "README.md").read_text() == ORIGINAL  # the edit never ran
    (db,) = list(tether_home.rglob("history.sqlite3"))
    with closing(sqlite3.connect(db)) as conn:
        statuses = conn.execute("SELECT status, pending FROM turns ORDER BY seq").fetchall()
    assert statuses == [("cancelled", None), ("complete", None)]

    # a new daemon's load shows the dropped call as failed and asks nothing
    third = await spawn_daemon(script=SCRIPT)
    third.client.peer.on_request = user.on_request
    again = await third.client.load_session(session_id, workspace)
    edit = [u for u in again.updates if u.get("toolCallId") == "call_edit"]
    assert edit[-1]["status"] == "failed"
    await asyncio.sleep(0.5)
    assert user.prompts == [] and ended(again.updates) == []


async def test_a_cancel_without_a_waiting_turn_changes_nothing(spawn_daemon, workspace: Path, tether_home: Path):
    daemon = await spawn_daemon(script=SCRIPT)
    session = await daemon.client.new_session(workspace)
    assert (await prompt_hi(daemon, session.id))["stopReason"] == "end_turn"
    await session.cancel()
    assert (await prompt_hi(daemon, session.id))["stopReason"] == "end_turn"
    assert ended(session.updates) == []
    (db,) = list(tether_home.rglob("history.sqlite3"))
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT status FROM turns").fetchall() == [("complete",), ("complete",)]


async def test_loading_again_while_the_turn_asks_shows_the_call_pending_and_the_answer_still_counts(
    spawn_daemon, workspace: Path
):
    # the same client loads the session a second time while its approval is open
    answers: list[asyncio.Future] = []

    async def on_request(method: str, params: dict):
        future = asyncio.get_running_loop().create_future()
        answers.append(future)
        return await future

    daemon = await spawn_daemon(script=SCRIPT)
    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("edit the readme")
    turn.start()
    await until(lambda: answers)
    await daemon.client.load_session(session.id, workspace)
    answers[0].set_result({"outcome": {"outcome": "selected", "optionId": "allow_once"}})
    # this client routes the session's updates to its running turn: the replay is among them
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    edit = [u for u in updates if u.get("toolCallId") == "call_edit"]
    replayed = [u for u in edit if u.get("sessionUpdate") == "tool_call"]
    assert len(replayed) == 2 and replayed[1]["status"] == "pending", edit  # live, then the replay
    assert [u.get("status") for u in edit if u.get("status") in ("failed", "completed")] == ["completed"]
