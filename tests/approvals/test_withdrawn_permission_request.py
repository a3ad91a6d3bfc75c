"""A client that takes back the daemon's permission request (`$/cancel_request` naming the
daemon's `tether-N` id, §3.14) instead of answering it: the daemon stops waiting (it once
waited for ever: the turn hung) and refuses the call as one it cannot ask about; the turn
goes on and ends."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from daemon_harness import BASIC_SCRIPT
from tether_protocol.peer import current_request_id

if TYPE_CHECKING:
    from pathlib import Path

APPROVALS = BASIC_SCRIPT.parent / "approvals.json"


async def test_a_withdrawn_permission_request_refuses_the_call_and_the_turn_ends(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon(script=APPROVALS, framing="ndjson")
    withdrawn: list[object] = []

    async def withdraw(method: str, params: dict):
        withdrawn.append(current_request_id.get())
        daemon.client.peer.notify("$/cancel_request", {"requestId": withdrawn[-1]})
        await asyncio.Event().wait()  # never answers

    daemon.client.peer.on_request = withdraw
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("edit the readme")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    assert len(withdrawn) == 1 and str(withdrawn[0]).startswith("tether-")
    (failed,) = [u for u in updates if u.get("toolCallId") == "call_edit" and u.get("status") == "failed"]
    said = failed["content"][0]["content"]["text"]
    assert said.startswith("not approved: mode ask needs the user's approval for editing README.md"), said
    assert "session/request_permission failed: cancelled by the other side without an answer" in said
    assert "Hello from the sample workspace." in (workspace / "README.md").read_text()
