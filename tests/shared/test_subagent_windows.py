"""A sub-agent seen from a v1 and a v2 window of one shared daemon (SPEC §12.6): the v1 window
that prompts sees the child nested under the `delegate` call as ever; the v2 window watching
the session sees it as a child session. Real shared daemon, real windows."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def _script(tmp_path: Path) -> Path:
    child = {"purpose": "delegate"}
    replies = [
        {
            "when": {"step": 1},
            "tool_calls": [
                {"id": "d1", "name": "delegate", "arguments": {"task": "Read README.md and say whom it greets."}}
            ],
        },
        {
            "when": {**child, "step": 1},
            "tool_calls": [{"id": "c_read", "name": "read_file", "arguments": {"path": "README.md"}}],
        },
        {"when": {**child, "step": 2}, "text": "It greets the sample workspace."},
        {"when": {"step": 2}, "text": "The sub-agent read it."},
    ]
    path = tmp_path / "delegate.json"
    path.write_text(json.dumps({"replies": replies}))
    return path


async def test_each_window_sees_the_sub_agent_in_its_own_version(windows, workspace: Path, tmp_path: Path):
    script = _script(tmp_path)
    modern = await windows.open(initialize=False, script=script)
    assert (await modern.initialize(protocolVersion=2))["protocolVersion"] == 2
    session_id = (await modern.request("session/new", {"cwd": str(workspace), "mcpServers": []}))["sessionId"]
    classic = await windows.open(script=script)
    watching = await classic.load_session(session_id, workspace)
    turn = watching.prompt("find out whom the README greets")
    await turn.wait()
    assert turn.stop_reason == "end_turn", turn.updates

    # v1: nested under the call, as before; no subagent_update
    nested = [u for u in turn.updates if u.get("toolCallId") == "d1/c_read"]
    assert nested[0]["sessionUpdate"] == "tool_call"
    assert all(u["_meta"]["tether"]["parentCallId"] == "d1" for u in nested)
    assert "subagent_update" not in {u["sessionUpdate"] for u in turn.updates}

    # v2: announced on the parent, the child's turn on its own id
    parent_v2 = modern._unclaimed.setdefault(session_id, [])
    for _ in range(300):
        if any(u.get("sessionUpdate") == "state_update" and u.get("state") == "idle" for u in parent_v2):
            break
        await asyncio.sleep(0.02)
    (child_id,) = {u["sessionId"] for u in parent_v2 if u["sessionUpdate"] == "subagent_update"}
    announced = next(u for u in parent_v2 if u["sessionUpdate"] == "subagent_update")
    assert announced["capabilities"] == {"cancel": {}} and announced["_meta"]["tether"]["parentCallId"] == "d1"
    assert not [u for u in parent_v2 if "/" in u.get("toolCallId", "")]
    child_v2 = modern._unclaimed.get(child_id, [])
    assert child_v2[0]["sessionUpdate"] == "user_message"
    assert [u["state"] for u in child_v2 if u["sessionUpdate"] == "state_update"] == ["running", "idle"]
    assert [u["status"] for u in child_v2 if u.get("toolCallId") == "c_read" and "status" in u][-1] == "completed"
    said = "".join(u["content"]["text"] for u in child_v2 if u["sessionUpdate"] == "agent_message_chunk")
    assert said == "It greets the sample workspace."
