"""The official ACP TypeScript SDK's v2 client steers a message into the running turn (SPEC §12.7).

tests/conformance/ts/v2_steer.mjs prompts "write a note" (examples/approvals.json: step 1
writes a file and asks first) and, while that approval waits, sends `session/prompt` with
`_meta.tether.steer: true`; then allows the write and reads the turn to idle. Every line
the daemon wrote is decoded with the v2 types.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from test_acp_v2_typescript_sdk import _validate_daemon_lines, run_v2_client

if TYPE_CHECKING:
    from pathlib import Path


def test_a_steered_prompt_is_answered_in_v2s_shape_once_it_landed(daemon_env: dict[str, str], workspace: Path) -> None:
    env = {**daemon_env, "PATH": daemon_env.get("PATH") or os.environ.get("PATH") or os.defpath}
    summary = run_v2_client(env, workspace, "v2_steer.mjs", "approvals.json")

    assert summary["steerAnsweredBeforeBoundary"] is False  # it waits for the step boundary
    turn_id = summary["promptAnswer"]["messageId"].removesuffix(".0")
    answer = summary["steerAnswer"]
    steer = answer["_meta"]["tether"]["steer"]
    assert steer["landed"] is True and steer["turnId"] == turn_id and steer["step"] == 1
    assert answer["messageId"] == f"{turn_id}.s{steer['messageSeq']}"
    # the turn shows it under that id, after the write's result and before the next step's words
    updates = summary["updates"]
    (shown,) = [u for u in updates if u["sessionUpdate"] == "user_message" and u["messageId"] == answer["messageId"]]
    assert shown["content"] == [{"type": "text", "text": "and a title"}]
    assert shown["_meta"]["tether"] == {"steered": True, "afterStep": 1}
    at = updates.index(shown)
    assert [u["status"] for u in updates[:at] if u.get("toolCallId") == "call_write" and "status" in u][
        -1
    ] == "completed"
    after = "".join(u["content"]["text"] for u in updates[at:] if u["sessionUpdate"] == "agent_message_chunk")
    assert after == "Nothing scripted for that."  # the model saw it (the script has no reply for it)
    assert updates[-1] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    assert [u["state"] for u in updates if u["sessionUpdate"] == "state_update"].count("idle") == 1  # one turn
    assert "user_message_chunk" not in _validate_daemon_lines(summary["wire"])
