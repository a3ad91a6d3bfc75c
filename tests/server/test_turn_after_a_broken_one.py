"""A session's turns share their journal, run report builder and input guard (made with the
session's turn setup): a turn after one that was cancelled while a call waited for approval,
cancelled while streaming, or failed, starts clean. In-process handlers over real SQLite and
the scripted provider."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest
from server_harness import Answered, Daemon, running, settings_for

from daemon_harness import EXAMPLES

if TYPE_CHECKING:
    from pathlib import Path


def _prompt(session_id: str, text: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


async def _until(done: Any) -> None:
    async with asyncio.timeout(10):
        while not done():
            await asyncio.sleep(0.01)


async def _after(daemon: Daemon, session_id: str, broken: str) -> None:
    """The turn after the broken one: its own messages under its own id, its report of its
    one step alone, and the model shown the conversation with every call answered."""
    answer = await daemon.call("session/prompt", _prompt(session_id, "hello again"))
    assert answer["stopReason"] == "end_turn"
    turn_id = answer["_meta"]["tether"]["turnId"]
    assert turn_id != broken
    dump = await daemon.call("_tether/session/dump", {"sessionId": session_id})
    mine = [(m["role"], m["status"]) for m in dump["messages"] if m["turn_id"] == turn_id]
    assert mine == [("user", "complete"), ("assistant", "complete")]
    reports = {
        r["turnId"]: r for r in (await daemon.call("_tether/session/report", {"sessionId": session_id}))["reports"]
    }
    report = reports[turn_id]
    assert (report["status"], report["stopReason"], report["stepCount"], report["toolCallCount"]) == (
        "complete",
        "end_turn",
        1,
        0,
    )
    assert [step["index"] for step in report["steps"]] == [1]
    assert reports[broken]["turnId"] == broken and reports[broken]["status"] != "complete"
    assert reports[broken]["startedAt"] < report["startedAt"]


async def test_a_turn_after_one_cancelled_while_its_second_step_waited_for_approval_starts_clean(
    tmp_path: Path, workspace: Path
) -> None:
    async with running(settings_for(tmp_path, script=str(EXAMPLES / "approvals.json")), workspace) as daemon:
        await daemon.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session_id = await daemon.new_session(workspace)
        held = asyncio.create_task(daemon.call("session/prompt", _prompt(session_id, "edit the readme")))
        await _until(lambda: any(m.get("method") == "session/request_permission" for m in daemon.conn.messages()))
        await daemon.call("session/cancel", {"sessionId": session_id})
        first = await held
        assert first["stopReason"] == "cancelled"
        await _after(daemon, session_id, first["_meta"]["tether"]["turnId"])
        dump = await daemon.call("_tether/session/dump", {"sessionId": session_id})
        results = [m["body"] for m in dump["messages"] if m["role"] == "tool"]
        # its first step's read ran and is reported with it; the edit was answered once, not run
        assert [(r["tool_call_id"], r["is_error"]) for r in results] == [("call_read", False), ("call_edit", True)]
        reports = (await daemon.call("_tether/session/report", {"sessionId": session_id}))["reports"]
        assert [r["stepCount"] for r in reports] == [1, 1]  # its read step; the next its own


async def test_a_turn_after_one_cancelled_while_streaming_starts_clean(settings: Any, workspace: Path) -> None:
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        slow = asyncio.create_task(daemon.call("session/prompt", _prompt(session_id, "slow")))
        await asyncio.sleep(0.8)  # past the first partial save (every 0.5 s)
        await daemon.call("session/cancel", {"sessionId": session_id})
        first = await slow
        assert first["stopReason"] == "cancelled"
        await _after(daemon, session_id, first["_meta"]["tether"]["turnId"])


async def test_a_turn_after_a_failed_one_starts_clean(settings: Any, workspace: Path) -> None:
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        with pytest.raises(Answered) as failed:
            await daemon.call("session/prompt", _prompt(session_id, "fail"))
        await _after(daemon, session_id, failed.value.data["turnId"])
