"""The official ACP TypeScript SDK's v2 client sees sub-agents as child sessions (SPEC §12.6).

tests/conformance/ts/v2_subagent.mjs runs two `delegate` turns (`--sleep`: the second
child's command, unique to the run): the first child edits README.md, its permission asked
on the child's own session and allowed; the second child runs a slow command and the client
sends `session/cancel` with the child's id once the process runs. Every line the daemon
wrote is decoded with the v2 types; the order is read from the wire itself.
"""

from __future__ import annotations

import itertools
import json
import os
from typing import TYPE_CHECKING, Any

from test_acp_v2_typescript_sdk import _validate_daemon_lines, run_v2_client

if TYPE_CHECKING:
    from pathlib import Path

_RUNS = itertools.count()


def _script(folder: Path, sleep: str) -> Path:
    child = {"purpose": "delegate"}
    suffix = sleep.split(".")[1]
    replies = [
        {
            "when": {"user": "^have a sub-agent edit", "step": 1},
            "text": "Handing it over.",
            "tool_calls": [
                {
                    "id": "d1",
                    "name": "delegate",
                    "arguments": {"task": "Edit README.md: greet the reviewers.", "writes": True},
                }
            ],
        },
        {
            "when": {**child, "user": "^Edit README", "step": 1},
            "text": "Reading.",
            "tool_calls": [{"id": "c_read", "name": "read_file", "arguments": {"path": "README.md"}}],
        },
        {
            "when": {**child, "user": "^Edit README", "step": 2},
            "text": "Editing.",
            "tool_calls": [
                {
                    "id": "c_edit",
                    "name": "edit_file",
                    "arguments": {
                        "path": "README.md",
                        "edits": [{"old_text": "Hello from the sample workspace.", "new_text": "Hello, reviewers."}],
                    },
                }
            ],
        },
        {"when": {**child, "user": "^Edit README", "step": 3}, "text": "Edited the greeting."},
        {"when": {"user": "^have a sub-agent edit", "step": 2}, "text": "The sub-agent edited it."},
        {
            "when": {"user": "^have a sub-agent run the slow", "step": 1},
            "tool_calls": [
                {"id": "d2", "name": "delegate", "arguments": {"task": "Wait for the slow check.", "writes": True}}
            ],
        },
        {
            "when": {**child, "user": "^Wait", "step": 1},
            "text": "Running it.",
            "tool_calls": [{"id": "c_sleep", "name": "run_command", "arguments": {"command": f"sleep {sleep}"}}],
        },
        {"when": {**child, "user": "^Wait", "step": 2}, "text": "It finished."},
        {
            "when": {"user": "^have a sub-agent run the slow", "step": 2},
            "text": "The sub-agent was stopped; I went on.",
        },
        {
            "when": {"user": "^have a sub-agent run the check once", "step": 1},
            "tool_calls": [
                {"id": "d3", "name": "delegate", "arguments": {"task": "Run the check once.", "writes": True}}
            ],
        },
        {
            "when": {**child, "user": "^Run the check", "step": 1},
            "tool_calls": [{"id": "c_again", "name": "run_command", "arguments": {"command": f"sleep 34.{suffix}"}}],
        },
        {"when": {**child, "user": "^Run the check", "step": 2}, "text": "It was stopped, so I skipped it."},
        {"when": {"user": "^have a sub-agent run the check once", "step": 2}, "text": "The sub-agent carried on."},
    ]
    path = folder / "v2-subagent.json"
    path.write_text(json.dumps({"replies": replies}))
    return path


def _run(daemon_env: dict[str, str], workspace: Path) -> dict[str, Any]:
    env = {**daemon_env, "PATH": daemon_env.get("PATH") or os.environ.get("PATH") or os.defpath}
    sleep = f"33.{os.getpid():07d}{next(_RUNS) % 1000:03d}"
    return run_v2_client(env, workspace, "v2_subagent.mjs", _script(workspace.parent, sleep), "--sleep", sleep)


def _daemon_updates(wire: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Every `session/update` the daemon wrote, in order (every line it wrote is decoded with
    the v2 types first)."""
    kinds = _validate_daemon_lines(wire)
    assert "subagent_update" in kinds
    lines = [json.loads(entry["line"]) for entry in wire if entry["from"] == "daemon"]
    return [line["params"] for line in lines if line.get("method") == "session/update"]


def _child_of(updates: list[dict[str, Any]], parent: str, call_id: str) -> str:
    (child,) = {
        u["update"]["sessionId"]
        for u in updates
        if u["sessionId"] == parent
        and u["update"]["sessionUpdate"] == "subagent_update"
        and u["update"]["_meta"]["tether"]["parentCallId"] == call_id
    }
    return child


def test_a_sub_agent_is_a_child_session_asked_on_its_own_id(daemon_env: dict[str, str], workspace: Path) -> None:
    summary = _run(daemon_env, workspace)
    parent = summary["sessionId"]
    updates = _daemon_updates(summary["wire"])
    child = _child_of(updates, parent, "d1")
    assert child != parent

    # announced on the parent before any update of the child, with its title, task and cancel
    first_of_child = next(i for i, u in enumerate(updates) if u["sessionId"] == child)
    announced = next(i for i, u in enumerate(updates) if u["update"].get("sessionId") == child)
    assert announced < first_of_child
    news = updates[announced]["update"]
    assert (
        news["title"].startswith("↳ Edit README.md") and news["description"] == "Edit README.md: greet the reviewers."
    )
    assert news["capabilities"] == {"cancel": {}}
    # the child's updates on its own id, in v2's shapes, with ids of its own; none nested on the parent
    mine = [u["update"] for u in updates if u["sessionId"] == child]
    assert mine[0]["sessionUpdate"] == "user_message"
    assert mine[0]["content"] == [{"type": "text", "text": "Edit README.md: greet the reviewers."}]
    states = [u["state"] for u in mine if u["sessionUpdate"] == "state_update"]
    assert states == ["running", "requires_action", "running", "idle"]
    edit = [u for u in mine if u.get("toolCallId") == "c_edit"]
    assert edit[0]["title"] and edit[-1]["status"] == "completed"
    said = "".join(u["content"]["text"] for u in mine if u["sessionUpdate"] == "agent_message_chunk")
    assert said == "Reading.Editing.Edited the greeting."
    ids = {u["messageId"] for u in mine if "messageId" in u}
    assert mine[0]["messageId"].endswith(".0") and len(ids) == 4
    on_parent = [u["update"] for u in updates if u["sessionId"] == parent]
    assert not [u for u in on_parent if "/" in u.get("toolCallId", "")]
    assert not [u for u in on_parent if "childSessionId" in (u.get("_meta") or {}).get("tether", {})]
    assert summary["bySession"][child] == mine  # the SDK's client got them on the child's id
    # its state mirrored on the parent, ending idle
    mirrored = [u["state"]["state"] for u in on_parent if u["sessionUpdate"] == "subagent_update" and "state" in u]
    assert mirrored[:4] == ["running", "requires_action", "running", "idle"]
    # asked: the delegate call on the parent, then the child's edit on the child's own session
    (delegate, edit_asked) = summary["permissions"][:2]
    assert delegate["sessionId"] == parent and delegate["subject"]["toolCall"]["toolCallId"] == "d1"
    assert edit_asked["sessionId"] == child and edit_asked["subject"]["toolCall"]["toolCallId"] == "c_edit"
    assert "Hello, reviewers." in summary["readme"]
    # the parent's turn: its call completed with the child's answer, its own text only
    done = [u for u in summary["first"] if u.get("toolCallId") == "d1" and u.get("status") == "completed"]
    assert done and "Edited the greeting." in done[-1]["content"][0]["content"]["text"]
    parent_said = "".join(u["content"]["text"] for u in summary["first"] if u["sessionUpdate"] == "agent_message_chunk")
    assert parent_said == "Handing it over.The sub-agent edited it."


def test_cancelling_the_child_session_stops_only_the_child(daemon_env: dict[str, str], workspace: Path) -> None:
    summary = _run(daemon_env, workspace)
    parent = summary["sessionId"]
    updates = _daemon_updates(summary["wire"])
    child = _child_of(updates, parent, "d2")
    assert summary["cancelledChild"] == child and summary["runningBefore"]

    mine = [u["update"] for u in updates if u["sessionId"] == child]
    assert mine[-1] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}
    assert [u for u in mine if u.get("toolCallId") == "c_sleep"][-1]["status"] in ("cancelled", "failed")
    assert summary["runningAfter"] == [], "the child's command outlived the cancel"
    # the parent: its delegate call ends cancelled as a per-call cancel ends it, and the turn goes on
    second = summary["second"]
    final = [u for u in second if u.get("toolCallId") == "d2" and u.get("status")][-1]
    assert final["status"] == "cancelled" and final["capabilities"] == {}
    assert final["content"][0]["content"]["text"].startswith("cancelled by the user")
    after = second[second.index(final) :]
    said = "".join(u["content"]["text"] for u in after if u["sessionUpdate"] == "agent_message_chunk")
    assert said == "The sub-agent was stopped; I went on."
    assert second[-1] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    mirrored = [u for u in updates if u["sessionId"] == parent and u["update"].get("sessionId") == child]
    assert mirrored[-1]["update"]["state"] == {"state": "idle", "stopReason": "cancelled"}


def test_a_child_sessions_call_is_cancelled_alone_by_its_own_id(daemon_env: dict[str, str], workspace: Path) -> None:
    summary = _run(daemon_env, workspace)
    parent = summary["sessionId"]
    updates = _daemon_updates(summary["wire"])
    child = _child_of(updates, parent, "d3")

    assert summary["callCancel"] == {}
    mine = [u["update"] for u in updates if u["sessionId"] == child]
    final = [u for u in mine if u.get("toolCallId") == "c_again" and u.get("status")][-1]
    assert final["status"] == "cancelled" and final["content"][0]["content"]["text"].startswith("cancelled by the user")
    assert summary["againAfter"] == [], "the child's command outlived its cancel"
    # the child went on to its next step, the parent's call completed with its answer
    said = "".join(
        u["content"]["text"] for u in mine[mine.index(final) :] if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert said == "It was stopped, so I skipped it."
    assert mine[-1] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    third = summary["third"]
    done = [u for u in third if u.get("toolCallId") == "d3" and u.get("status")][-1]
    assert done["status"] == "completed" and "It was stopped, so I skipped it." in done["content"][0]["content"]["text"]
    assert third[-1] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
