"""Stopping one running MCP tool call (`_tether/toolCall/cancel`, SPEC §12.4): the request
is cancelled at the real server (`notifications/cancelled`: tests/mcp/servers/trouble.py's
`never` writes "cancelled" to its marker), the call ends with what the model is told, and
the turn goes on to its next step."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from mcp_harness import SCRIPT, final, new_session, text, trouble_marking_cancels

from daemon_harness import until

if TYPE_CHECKING:
    from pathlib import Path


async def test_cancelling_one_mcp_call_cancels_its_request_and_the_turn_goes_on(
    spawn_daemon,
    workspace: Path,
    tmp_path: Path,
) -> None:
    marker = trouble_marking_cancels(tmp_path)
    daemon = await spawn_daemon(script=SCRIPT)
    session = await new_session(daemon, workspace)
    turn = session.prompt("never answer")
    turn.start()
    await until(lambda: marker.exists() and marker.read_text() == "started", timeout=30)  # the server has it

    answer = await daemon.client.request(
        "_tether/toolCall/cancel", {"sessionId": session.id, "toolCallId": "call_never"}
    )
    result = await asyncio.wait_for(turn.wait(), 30)

    assert answer == {} and result["stopReason"] == "end_turn"  # not the whole turn: only the call
    done = final(turn.updates, "call_never")
    assert done["status"] == "failed" and text(done).startswith("cancelled by the user")
    await until(lambda: marker.read_text() == "cancelled", timeout=30)
