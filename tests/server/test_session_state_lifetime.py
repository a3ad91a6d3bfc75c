"""What a session owns lives and dies with it (issue 32 item 2): its prompt queue and the
rest of `LiveSession` are dropped when it closes, and nothing of it reaches a new session.
In-process handlers over real SQLite and the scripted provider; the garbage collector
shows what is left behind."""

from __future__ import annotations

import asyncio
import gc
from typing import TYPE_CHECKING, Any

from server_harness import Daemon, running, settings_for

from daemon_harness import EXAMPLES
from tether.services.live_session import LiveSession
from tether.services.queue import PromptQueue

if TYPE_CHECKING:
    from pathlib import Path

APPROVALS = EXAMPLES / "approvals.json"


def _prompt(session_id: str, text: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


def _left(kind: type, session_id: str) -> list[Any]:
    """The objects of ``kind`` still in memory for ``session_id``."""
    gc.collect()
    return [
        o
        for o in gc.get_objects()
        if isinstance(o, kind) and getattr(o, "session_id", getattr(o, "id", None)) == session_id
    ]


async def _queued(daemon: Daemon, session_id: str) -> list[dict[str, Any]]:
    return list((await daemon.call("_tether/session/queue", {"sessionId": session_id}))["queued"])


async def test_a_closed_sessions_queue_goes_with_it_and_a_new_session_starts_without(
    tmp_path: Path, workspace: Path
) -> None:
    async with running(settings_for(tmp_path, script=str(APPROVALS)), workspace) as daemon:
        await daemon.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session_id = await daemon.new_session(workspace)
        held = asyncio.create_task(daemon.call("session/prompt", _prompt(session_id, "write a note")))
        async with asyncio.timeout(10):  # the turn waits for an approval nobody answers here
            while not any(m.get("method") == "session/request_permission" for m in daemon.conn.messages()):
                await asyncio.sleep(0.01)
        later = [asyncio.create_task(daemon.call("session/prompt", _prompt(session_id, f"then {i}"))) for i in range(2)]
        async with asyncio.timeout(10):
            while len(await _queued(daemon, session_id)) < 2:
                await asyncio.sleep(0.01)
        assert len(_left(PromptQueue, session_id)) == 1 and len(_left(LiveSession, session_id)) == 1

        await daemon.call("session/close", {"sessionId": session_id})
        assert [(await t)["stopReason"] for t in (held, *later)] == ["cancelled"] * 3
        del held, later
        assert _left(PromptQueue, session_id) == [] and _left(LiveSession, session_id) == []

        other = await daemon.new_session(workspace)  # another id: its queue is its own, empty
        assert await _queued(daemon, other) == []
        answer = await daemon.call("session/prompt", _prompt(other, "hi"))
        assert answer["stopReason"] == "end_turn"
        dump = await daemon.call("_tether/session/dump", {"sessionId": other})
        # none of the closed session's prompts ran here
        assert [m["body"]["content"][0]["text"] for m in dump["messages"] if m["role"] == "user"] == ["hi"]
        # loading the closed one again: a fresh live session, nothing queued
        await daemon.call("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
        assert await _queued(daemon, session_id) == []
