"""session/prompt and session/cancel, called in-process with the scripted provider."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest
from server_harness import Answered, running, settings_for

from daemon_harness import EXAMPLES

if TYPE_CHECKING:
    from pathlib import Path

    from tether.config import Settings


def _text(updates: list[dict], kind: str) -> str:
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == kind)


async def test_a_prompt_answers_its_stop_reason_after_its_updates(settings: Settings, workspace: Path):
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        answer = await daemon.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "what does the readme say?"}]},
        )
        assert answer["stopReason"] == "end_turn"
        assert answer["_meta"]["tether"]["turnId"].startswith("turn_")
        updates = daemon.conn.updates(session_id)
        assert _text(updates, "agent_message_chunk") == "Reading the README.The README says hello."
        read = [u for u in updates if u.get("toolCallId") == "call_read" and u.get("status") == "completed"]
        assert len(read) == 1
        report = await daemon.call("_tether/session/report", {"sessionId": session_id})
        assert [r["turnId"] for r in report["reports"]] == [answer["_meta"]["tether"]["turnId"]]


async def test_a_provider_failure_is_answered_with_the_turn_it_broke(settings: Settings, workspace: Path):
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        with pytest.raises(Answered) as failed:
            await daemon.call("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "fail"}]})
        assert failed.value.code == -32012
        assert "scripted outage: upstream returned 503" in failed.value.message
        assert failed.value.data["turnId"].startswith("turn_") and failed.value.data["kind"]


async def test_a_second_prompt_while_one_runs_is_queued_and_cancel_stops_only_the_first(
    settings: Settings, workspace: Path
):
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        slow = asyncio.create_task(
            daemon.call("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "slow"}]})
        )
        while not _text(daemon.conn.updates(session_id), "agent_message_chunk"):
            await asyncio.sleep(0.01)
        queued = asyncio.create_task(
            daemon.call("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]})
        )
        while not (await daemon.call("_tether/session/queue", {"sessionId": session_id}))["queued"]:
            await asyncio.sleep(0.01)
        (waiting,) = (await daemon.call("_tether/session/queue", {"sessionId": session_id}))["queued"]
        assert waiting["preview"] == "hi" and waiting["state"] == "queued"
        assert await daemon.call("session/cancel", {"sessionId": session_id}) is None
        assert (await slow)["stopReason"] == "cancelled"
        streamed = _text(daemon.conn.updates(session_id), "agent_message_chunk")
        assert streamed and len(streamed) < len(
            "This answer streams slowly so that it can be cancelled part way through."
        )
        # the queued prompt then runs its own turn, and is answered when it ends
        assert (await queued)["stopReason"] == "end_turn"
        assert _text(daemon.conn.updates(session_id), "agent_message_chunk").endswith(
            "Hello from the scripted provider."
        )
        assert (await daemon.call("_tether/session/queue", {"sessionId": session_id}))["queued"] == []


async def test_cancelling_an_unknown_session_is_ignored(settings: Settings, workspace: Path):
    async with running(settings, workspace) as daemon:
        assert await daemon.call("session/cancel", {"sessionId": "sess_nobody"}) is None
        assert daemon.conn.messages() == []


async def test_a_loaded_session_replays_its_conversation_before_the_answer(settings: Settings, workspace: Path):
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        await daemon.call("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hello"}]})
    async with running(settings, workspace) as daemon:
        answer = await daemon.call("session/load", {"sessionId": session_id, "cwd": str(workspace)})
        assert answer["modes"]["currentModeId"] == "ask"
        updates = daemon.conn.updates(session_id)
        assert _text(updates, "user_message_chunk") == "hello"
        assert _text(updates, "agent_message_chunk") == "Hello from the scripted provider."
        again = await daemon.call(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "more"}]}
        )
        assert again["stopReason"] == "end_turn"


async def test_an_edit_is_asked_through_the_client_and_runs_once_allowed(tmp_path: Path, workspace: Path):
    async with running(settings_for(tmp_path, script=str(EXAMPLES / "approvals.json")), workspace) as daemon:
        await daemon.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session_id = await daemon.new_session(workspace)
        turn = asyncio.create_task(
            daemon.call(
                "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "edit the readme"}]}
            )
        )
        while not (asks := [m for m in daemon.conn.messages() if m.get("method") == "session/request_permission"]):
            await asyncio.sleep(0.01)
        (ask,) = asks
        assert ask["params"]["sessionId"] == session_id and ask["params"]["toolCall"]["toolCallId"] == "call_edit"
        assert "allow_once" in [o["optionId"] for o in ask["params"]["options"]]
        daemon.server.rpc.handle_message(
            {
                "jsonrpc": "2.0",
                "id": ask["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
            }
        )
        assert (await turn)["stopReason"] == "end_turn"
        assert "Hello, edited by Tether." in (workspace / "README.md").read_text()
