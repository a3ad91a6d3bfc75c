"""A v1 client stops one running command with `_tether/toolCall/cancel` (SPEC §12.4).

The real daemon (`tether serve`, the scripted provider) runs examples/v2-item-cancel.json:
an approved `sleep` command is cancelled while its process runs; the call ends `failed`
(v1 has no `cancelled` status) with what the model was told, no process of it is left,
and the turn goes on to the model's next reply and ends `end_turn`.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import pytest

from daemon_harness import User, host_pids, item_cancel_script, text_of, until
from tether_client import ClientError

if TYPE_CHECKING:
    from pathlib import Path


async def test_a_v1_client_cancels_one_running_command_and_the_turn_goes_on(
    spawn_daemon,
    workspace: Path,
    tmp_path: Path,
) -> None:
    script, sleep, _ = item_cancel_script(tmp_path)
    daemon = await spawn_daemon(script=script)
    user = User("allow_once")
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("run the slow check")
    turn.start()
    await until(lambda: host_pids(sleep), timeout=20)

    answer = await daemon.client.request(
        "_tether/toolCall/cancel", {"sessionId": session.id, "toolCallId": "call_sleep"}
    )
    result = await turn.wait()

    assert answer == {}
    assert result["stopReason"] == "end_turn"
    # a sandboxed command's inner processes die with the sandbox's leader, a moment later
    await until(lambda: host_pids(sleep) == [], timeout=10)
    mine = [u for u in turn.updates if u.get("toolCallId") == "call_sleep" and u.get("status")]
    assert mine[-1]["status"] == "failed"
    told = "".join(c["content"]["text"] for c in mine[-1]["content"] if c["type"] == "content")
    assert told.startswith("cancelled by the user")
    assert "capabilities" not in str(turn.updates)  # v1 updates keep v1's shape
    assert text_of(turn.updates).endswith("The check was stopped, so I carried on without it.")

    with pytest.raises(ClientError) as refused:
        await daemon.client.request("_tether/toolCall/cancel", {"sessionId": session.id, "toolCallId": "call_sleep"})
    assert refused.value.code == -32602 and "it has already finished" in refused.value.message


async def test_cancelling_a_delegate_call_stops_its_sub_agent_and_the_parent_goes_on(
    spawn_daemon,
    workspace: Path,
    tmp_path: Path,
) -> None:
    slow = "The sub-agent writes its long answer very slowly, so that it is stopped part way through. " * 3
    replies = [
        {
            "when": {"step": 1},
            "tool_calls": [{"id": "d1", "name": "delegate", "arguments": {"task": "look around slowly"}}],
        },
        {"when": {"purpose": "delegate", "step": 1}, "text": slow, "chunk_size": 4, "delay_ms": 50},
        {"when": {"step": 2}, "text": "The sub-agent was stopped; I answer myself."},
    ]
    path = tmp_path / "delegate-cancel.json"
    path.write_text(json.dumps({"replies": replies}))
    daemon = await spawn_daemon(script=path)
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("delegate it")
    turn.start()

    def child_runs() -> bool:  # the call shows its sub-agent's session: the child's turn has begun
        return any(u.get("toolCallId") == "d1" and "childSessionId" in str(u.get("_meta")) for u in turn.updates)

    await until(child_runs, timeout=20)
    await asyncio.sleep(0.3)  # into its slow answer (about 3 s long)
    answer = await daemon.client.request("_tether/toolCall/cancel", {"sessionId": session.id, "toolCallId": "d1"})
    result = await turn.wait()

    assert answer == {} and result["stopReason"] == "end_turn"
    ended = [u for u in turn.updates if u.get("toolCallId") == "d1" and u.get("status") in ("completed", "failed")]
    told = "".join(c["content"]["text"] for c in ended[-1]["content"] if c["type"] == "content")
    assert ended[-1]["status"] == "failed" and told.startswith("cancelled by the user")
    assert "the sub-agent was stopped" in told and slow not in told  # stopped part way, not run to its end
    assert text_of(turn.updates).endswith("The sub-agent was stopped; I answer myself.")
