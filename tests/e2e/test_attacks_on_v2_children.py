"""A hostile model's sub-agents on ACP v2 (SPEC §12.6): many children in one step, a child
that asks for approval while its parent is cancelled, and a client that names a child
after it ended. Every child is announced and ends, nothing hangs, no command runs that
was not approved, and the parent takes its next prompt."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from v2_window import ALLOW, V2Window

from daemon_harness import host_pids, until

if TYPE_CHECKING:
    from pathlib import Path


def _write(folder: Path, replies: list[dict[str, Any]]) -> Path:
    path = folder / "children.json"
    path.write_text(json.dumps({"replies": replies}))
    return path


async def _window(spawn_daemon, script: Path, answer=None) -> V2Window:
    daemon = await spawn_daemon(script=script, initialize=False)
    window = V2Window(daemon.client, answer)
    await window.initialize()
    return window


async def test_many_children_in_one_step_each_announced_and_ended(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    tasks = [f"look at part {n}" for n in range(8)]
    replies = [
        {
            "when": {"step": 1, "user": "^split"},
            "tool_calls": [
                {"id": f"d{n}", "name": "delegate", "arguments": {"task": task}} for n, task in enumerate(tasks)
            ],
        },
        {"when": {"purpose": "delegate", "step": 1}, "text": "part seen"},
        {"when": {"step": 2, "user": "^split"}, "text": "All parts seen."},
    ]
    window = await _window(spawn_daemon, _write(tmp_path, replies))
    session = await window.new_session(workspace)
    await window.prompt(session, "split the work")
    ended = await window.idle(session, timeout=60)

    assert ended["stopReason"] == "end_turn"
    announced = [u for u in window.of(session, "subagent_update") if "description" in u]
    assert sorted(u["description"] for u in announced) == sorted(tasks)
    children = {u["sessionId"] for u in announced}
    assert len(children) == 8 and session not in children
    for child in children:  # each its own session, ended on its own id
        assert window.states(child) == ["running", "idle"]
        assert window.of(child, "state_update")[-1]["stopReason"] == "end_turn"
    calls = [u for u in window.of(session, "tool_call_update") if u.get("status") == "completed"]
    assert sorted(u["toolCallId"] for u in calls) == [f"d{n}" for n in range(8)]


async def test_a_child_asking_while_its_parent_is_cancelled(spawn_daemon, workspace: Path, tmp_path: Path) -> None:
    marker = f"33.{tmp_path.name[-6:].encode().hex()}"
    replies = [
        {
            "when": {"step": 1, "user": "^delegate"},
            "tool_calls": [{"id": "d1", "name": "delegate", "arguments": {"task": "run the check", "writes": True}}],
        },
        {
            "when": {"purpose": "delegate", "step": 1},
            "tool_calls": [{"id": "c1", "name": "run_command", "arguments": {"command": f"sleep {marker}"}}],
        },
        {"when": {"step": 1, "user": "^hello"}, "text": "Hello."},
    ]
    never, parents = asyncio.Event(), []

    async def hold(method: str, params: dict) -> Any:
        if params["sessionId"] in parents:  # the delegate (it writes) is allowed
            return ALLOW
        await never.wait()  # the child's command is never answered: the parent is cancelled meanwhile

    window = await _window(spawn_daemon, _write(tmp_path, replies), hold)
    session = await window.new_session(workspace)
    parents.append(session)
    await window.prompt(session, "delegate the check")
    await until(lambda: len(window.asked) == 2)
    method, asked = window.asked[1]
    child = asked["sessionId"]
    assert method == "session/request_permission" and child != session
    assert window.states(child)[-1] == "requires_action"

    window.client.peer.notify("session/cancel", {"sessionId": session})
    ended = await window.idle(session)
    await until(lambda: "idle" in window.states(child))

    assert ended["stopReason"] == "cancelled"
    assert window.of(child, "state_update")[-1] == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "cancelled",
    }
    assert host_pids(marker) == []  # never approved, never run
    asked_calls = [u for u in window.of(child, "tool_call_update") if u["toolCallId"] == "c1" and u.get("status")]
    assert asked_calls[-1]["status"] != "completed"
    # the child is over: naming it is a no-op (session/cancel) or refused with why, never -32603
    window.client.peer.notify("session/cancel", {"sessionId": child})
    error = await window.refused("tool_call/cancel", {"sessionId": child, "toolCallId": "c1"})
    assert error.code in (-32602, -32002), error.message
    await window.prompt(session, "hello")
    await until(lambda: window.states(session).count("idle") == 2)
    assert window.of(session, "state_update")[-1]["stopReason"] == "end_turn"
    assert window.states(child).count("idle") == 1  # the child did not run again


async def test_a_running_sub_agents_session_takes_no_prompt_of_its_own(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    slow = "The sub-agent reads slowly. " * 12
    replies = [
        {
            "when": {"step": 1, "user": "^delegate"},
            "tool_calls": [{"id": "d1", "name": "delegate", "arguments": {"task": "read around"}}],
        },
        {"when": {"purpose": "delegate", "step": 1}, "text": slow, "chunk_size": 6, "delay_ms": 25},
        {"when": {"step": 2, "user": "^delegate"}, "text": "Done."},
        {"when": {"step": 1}, "text": "A turn of its own."},
    ]
    window = await _window(spawn_daemon, _write(tmp_path, replies))
    session = await window.new_session(workspace)
    await window.prompt(session, "delegate the reading")
    await until(lambda: window.of(session, "subagent_update"))
    child = window.of(session, "subagent_update")[0]["sessionId"]
    await until(lambda: window.of(child, "agent_message_chunk"))  # the child's turn runs

    # a client that opens the child's session meanwhile is told it runs, and cannot start
    # a second turn in it beside the sub-agent's
    await window.client.request("session/resume", {"sessionId": child, "cwd": str(workspace), "mcpServers": []})
    assert window.of(child, "state_update")[-1] == {"sessionUpdate": "state_update", "state": "running"}
    busy = await window.refused("session/prompt", {"sessionId": child, "prompt": [{"type": "text", "text": "hijack"}]})
    assert busy.code == -32010 and child in busy.message and "d1" in busy.message, busy.message
    ended = await window.idle(session)

    assert ended["stopReason"] == "end_turn"
    said = "".join(u["content"]["text"] for u in window.of(child, "agent_message_chunk"))
    assert said == slow  # the sub-agent's turn alone ran in its session
    assert [u["content"][0]["text"] for u in window.of(child, "user_message")] == ["read around"]


async def test_a_child_that_delegates_again_gets_no_grandchild(spawn_daemon, workspace: Path, tmp_path: Path) -> None:
    replies = [
        {
            "when": {"step": 1, "user": "^delegate"},
            "tool_calls": [{"id": "d1", "name": "delegate", "arguments": {"task": "split it further"}}],
        },
        {
            "when": {"purpose": "delegate", "step": 1},
            "tool_calls": [{"id": "d2", "name": "delegate", "arguments": {"task": "and again"}}],
        },
        {"when": {"purpose": "delegate", "step": 2}, "text": "I could not delegate."},
        {"when": {"step": 2, "user": "^delegate"}, "text": "Done."},
    ]
    window = await _window(spawn_daemon, _write(tmp_path, replies))
    session = await window.new_session(workspace)
    await window.prompt(session, "delegate the work")
    ended = await window.idle(session)

    assert ended["stopReason"] == "end_turn"
    announced = [u for _, u in window.updates if u["sessionUpdate"] == "subagent_update" and "description" in u]
    assert [u["description"] for u in announced] == ["split it further"]  # one child, no grandchild
    child = announced[0]["sessionId"]
    refused = [u for u in window.of(child, "tool_call_update") if u["toolCallId"] == "d2" and u.get("status")]
    assert refused[-1]["status"] == "failed"
    said = "".join(u["content"]["text"] for u in window.of(child, "agent_message_chunk"))
    assert said == "I could not delegate."


async def test_a_child_whose_model_fails_says_why(spawn_daemon, workspace: Path, tmp_path: Path) -> None:
    replies = [  # the child's model has no reply: its provider fails
        {
            "when": {"step": 1, "user": "^delegate"},
            "tool_calls": [{"id": "d1", "name": "delegate", "arguments": {"task": "look"}}],
        },
        {"when": {"step": 2, "user": "^delegate"}, "text": "The sub-agent failed; I go on."},
    ]
    window = await _window(spawn_daemon, _write(tmp_path, replies))
    session = await window.new_session(workspace)
    await window.prompt(session, "delegate the look")
    ended = await window.idle(session)

    assert ended["stopReason"] == "end_turn"
    child = window.of(session, "subagent_update")[0]["sessionId"]
    last = window.of(child, "state_update")[-1]
    assert last["state"] == "idle" and last["stopReason"] == "error"
    assert last["error"]["code"] == -32012 and last["error"]["message"].startswith("the model provider failed")
    mirrored = [u["state"] for u in window.of(session, "subagent_update") if "state" in u][-1]
    assert mirrored == {k: v for k, v in last.items() if k != "sessionUpdate"}
