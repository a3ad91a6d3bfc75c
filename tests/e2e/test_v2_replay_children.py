"""What a v2 `session/resume` replay and a v2 window's live view show of sub-agents and
command terminals (SPEC §12.6, §12.9): a `delegate` call's child replayed as the live client
saw it (its `subagent_update`, its own updates on its id), a command's terminal replayed,
and the parent `requires_action` while only its child waits. Real daemons, a new one for
each replay; every message the daemon sent is decoded with the v2 types."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
from typing import TYPE_CHECKING, Any

from v2_window import ALLOW, V2Window, assert_valid

from daemon_harness import until
from tether_protocol.acp_v2 import convert
from tether_protocol.acp_v2 import schema_types as v2

if TYPE_CHECKING:
    from pathlib import Path

TERMINALS = {"_meta": {"terminal_output": True}}
TASK = "Read README.md and say whom it greets."


def _write(folder: Path, replies: list[dict[str, Any]]) -> Path:
    path = folder / "children.json"
    path.write_text(json.dumps({"replies": replies}))
    return path


def _delegating(folder: Path) -> Path:
    child = {"purpose": "delegate"}
    return _write(
        folder,
        [
            {
                "when": {"step": 1, "user": "^find out"},
                "text": "Asking a sub-agent.",
                "tool_calls": [{"id": "d1", "name": "delegate", "arguments": {"task": TASK}}],
            },
            {
                "when": {**child, "step": 1},
                "text": "Reading.",
                "tool_calls": [{"id": "c_read", "name": "read_file", "arguments": {"path": "README.md"}}],
            },
            {"when": {**child, "step": 2}, "text": "It greets the sample workspace."},
            {"when": {"step": 2, "user": "^find out"}, "text": "The sub-agent read it."},
        ],
    )


async def _window(spawn_daemon, script: Path, capabilities: dict | None = None, answer=None) -> V2Window:
    daemon = await spawn_daemon(script=script, initialize=False)
    window = V2Window(daemon.client, answer)
    await window.initialize(capabilities)
    return window


async def _replayed(spawn_daemon, script: Path, workspace: Path, session_id: str, capabilities=None) -> V2Window:
    """A new daemon's v2 window that resumed `session_id` with a replay from the start."""
    window = await _window(spawn_daemon, script, capabilities)
    answer = await window.client.request(
        "session/resume",
        {
            "sessionId": session_id,
            "cwd": str(workspace),
            "mcpServers": [],
            "replayFrom": {"type": "start"},
        },
    )
    convert(answer, v2.ResumeSessionResponse, method="session/resume")
    assert_valid(window)
    return window


def _said(updates: list[dict]) -> str:
    return "".join(
        block["text"] if u["sessionUpdate"] == "agent_message" else u["content"]["text"]
        for u in updates
        if u["sessionUpdate"] in ("agent_message", "agent_message_chunk")
        for block in (u["content"] if u["sessionUpdate"] == "agent_message" else [u["content"]])
    )


async def test_a_replay_shows_the_sub_agent_as_the_live_client_saw_it(spawn_daemon, workspace: Path, tmp_path: Path):
    script = _delegating(tmp_path)
    live = await _window(spawn_daemon, script)
    parent = await live.new_session(workspace)
    await live.prompt(parent, "find out whom the README greets")
    assert (await live.idle(parent, timeout=60))["stopReason"] == "end_turn"
    (child,) = {u["sessionId"] for u in live.of(parent, "subagent_update")}
    live_child = live.of(child)

    window = await _replayed(spawn_daemon, script, workspace, parent)
    order = [s for s, _u in window.updates]
    done = next(i for i, (_s, u) in enumerate(window.updates) if u["sessionUpdate"] == "replay_complete")
    # announced on the parent, after its `delegate` call and before anything of the child
    (announced,) = window.of(parent, "subagent_update")
    assert announced == {
        "sessionUpdate": "subagent_update",
        "sessionId": child,
        "title": "↳ " + TASK,
        "description": TASK,
        "capabilities": {},
        "state": {"state": "idle", "stopReason": "end_turn"},
        "_meta": {"tether": {"parentCallId": "d1"}},
    }
    at = window.updates.index((parent, announced))
    assert order.index(child) == at + 1 and max(i for i, s in enumerate(order) if s == child) < done
    delegate = next(u for u in window.of(parent, "tool_call_update") if u["toolCallId"] == "d1")
    assert window.updates.index((parent, delegate)) < at and delegate["status"] == "completed"
    # the child's own updates, on its id, under the ids the live ones had
    mine = window.of(child)
    assert mine[0] == {
        "sessionUpdate": "user_message",
        "messageId": live_child[0]["messageId"],
        "content": [{"type": "text", "text": TASK}],
    }
    assert _said(mine) == _said(live_child) == "Reading.It greets the sample workspace."
    assert {u["messageId"] for u in mine if "messageId" in u} == {
        u["messageId"] for u in live_child if "messageId" in u
    }
    (read,) = [u for u in mine if u.get("toolCallId") == "c_read"]
    assert read["status"] == "completed" and "Hello from the sample workspace." in read["content"][0]["content"]["text"]
    assert not [u for u in window.of(parent) if u.get("toolCallId") == "c_read"]

    # the child's session resumed by its own id replays the same updates
    alone = await _replayed(spawn_daemon, script, workspace, child)
    assert alone.of(child)[: len(mine)] == mine
    assert alone.of(child)[len(mine)]["sessionUpdate"] == "replay_complete"


def _command(folder: Path, call_id: str, arguments: dict[str, Any]) -> Path:
    return _write(
        folder,
        [
            {"when": {"step": 1}, "tool_calls": [{"id": call_id, "name": "run_command", "arguments": arguments}]},
            {"when": {"step": 2}, "text": "It ran."},
        ],
    )


async def _ran(spawn_daemon, script: Path, workspace: Path) -> tuple[V2Window, str]:
    """A live v2 window shown terminals, and its session once its one command's turn ended."""
    live = await _window(spawn_daemon, script, TERMINALS)
    session = await live.new_session(workspace)
    await live.prompt(session, "run it")
    await live.idle(session, timeout=60)
    return live, session


async def test_a_replay_shows_a_commands_terminal_as_the_live_client_saw_it(
    spawn_daemon, workspace: Path, tmp_path: Path
):
    (workspace / "sub").mkdir()
    command = "printf 'first\\nsecond\\n'; echo 'exit code 9 · not the footer'; exit 3"
    script = _command(tmp_path, "run1", {"command": command, "cwd": "sub"})
    live, session = await _ran(spawn_daemon, script, workspace)
    started, ended = live.of(session, "terminal_update")
    said = b"".join(base64.b64decode(u["data"]) for u in live.of(session, "terminal_output_chunk")).decode()
    assert "second\n" in said and ended["exitStatus"] == {"exitCode": 3, "signal": None}

    window = await _replayed(spawn_daemon, script, workspace, session, TERMINALS)
    terminal = [u for u in window.of(session) if u.get("terminalId") == "run1"]
    assert [u["sessionUpdate"] for u in terminal] == ["terminal_update", "terminal_output_chunk", "terminal_update"]
    assert terminal[0] == {**started, "capabilities": {}}
    assert terminal[0]["cwd"] == str(workspace / "sub")
    replayed = base64.b64decode(terminal[1]["data"]).decode()
    assert replayed.rstrip("\n") == said.rstrip("\n")
    assert terminal[2] == ended
    (call,) = [u for u in window.of(session, "tool_call_update") if u["toolCallId"] == "run1"]
    assert window.updates.index((session, terminal[2])) < window.updates.index((session, call))
    assert call["status"] == "failed" and "exit code 3" in call["content"][0]["content"]["text"]

    # a client that did not ask for terminals: none, as live
    plain = await _replayed(spawn_daemon, script, workspace, session)
    assert not [u for u in plain.of(session) if "terminalId" in u]


async def test_the_parent_requires_action_while_only_its_child_waits(spawn_daemon, workspace: Path, tmp_path: Path):
    child = {"purpose": "delegate"}
    script = _write(
        tmp_path,
        [
            {
                "when": {"step": 1, "user": "^check"},
                "tool_calls": [
                    {"id": "d1", "name": "delegate", "arguments": {"task": "run the check", "writes": True}}
                ],
            },
            {
                "when": {**child, "step": 1},
                "tool_calls": [{"id": "c1", "name": "run_command", "arguments": {"command": "echo checked"}}],
            },
            {"when": {**child, "step": 2}, "text": "Checked."},
            {"when": {"step": 2, "user": "^check"}, "text": "Done."},
        ],
    )
    release, parents = asyncio.Event(), []

    async def answer(method: str, params: dict) -> Any:
        if params["sessionId"] not in parents:  # the child's command waits until released
            await release.wait()
        return ALLOW

    window = await _window(spawn_daemon, script, answer=answer)
    parent = await window.new_session(workspace)
    parents.append(parent)
    await window.prompt(parent, "check it")
    await until(lambda: any(p["sessionId"] != parent for _m, p in window.asked), timeout=30)
    (kid,) = {p["sessionId"] for _m, p in window.asked if p["sessionId"] != parent}
    await until(lambda: window.states(parent)[-1:] == ["requires_action"])
    assert window.states(kid)[-1] == "requires_action"
    release.set()
    assert (await window.idle(parent, timeout=60))["stopReason"] == "end_turn"
    # the delegate's own approval, then the child's: each requires_action, then running
    assert window.states(parent) == ["running", "requires_action", "running", "requires_action", "running", "idle"]
    assert_valid(window)


async def test_a_replayed_terminal_of_a_command_killed_at_its_timeout(spawn_daemon, workspace: Path, tmp_path: Path):
    script = _command(tmp_path, "slow", {"command": "echo started; sleep 30", "timeout": 1})
    live, session = await _ran(spawn_daemon, script, workspace)
    _started, ended = live.of(session, "terminal_update")
    assert ended["exitStatus"]["exitCode"] is None and ended["exitStatus"]["signal"]

    window = await _replayed(spawn_daemon, script, workspace, session, TERMINALS)
    terminal = [u for u in window.of(session) if u.get("terminalId") == "slow"]
    assert terminal[-1] == ended  # the same exit status: killed, by the same signal
    assert base64.b64decode(terminal[1]["data"]).decode().startswith("started\n")


async def test_a_child_whose_daemon_died_replays_as_ended(spawn_daemon, workspace: Path, tmp_path: Path):
    slow = "The child answers slowly, so its daemon dies while it speaks. " * 4
    script = _write(
        tmp_path,
        [
            {
                "when": {"step": 1, "user": "^ask"},
                "text": "Asking.",
                "tool_calls": [{"id": "d1", "name": "delegate", "arguments": {"task": "Speak slowly."}}],
            },
            {"when": {"purpose": "delegate", "step": 1}, "text": slow, "chunk_size": 4, "delay_ms": 30},
        ],
    )
    daemon = await spawn_daemon(script=script, initialize=False)
    live = V2Window(daemon.client)
    await live.initialize()
    parent = await live.new_session(workspace)
    await live.prompt(parent, "ask a sub-agent")
    await until(lambda: live.of(parent, "subagent_update"))
    child = live.of(parent, "subagent_update")[0]["sessionId"]
    await until(lambda: len(live.of(child, "agent_message_chunk")) > 3, timeout=30)
    os.kill(daemon.pid, signal.SIGKILL)
    await daemon.client.process.wait()

    window = await _replayed(spawn_daemon, script, workspace, parent)
    (announced,) = window.of(parent, "subagent_update")
    assert announced["sessionId"] == child
    assert announced["state"] == {"state": "idle", "stopReason": "cancelled"} and announced["capabilities"] == {}
    assert window.of(child, "user_message")[0]["content"] == [{"type": "text", "text": "Speak slowly."}]
    assert window.states(parent) == ["idle"]


async def _long_child(home: Path, workspace: Path, turns: int) -> tuple[str, str]:
    """A stored parent whose `delegate` call ran a child of `turns` turns of six messages (so
    the replay's pages end between a call and its result), as a daemon stores them."""
    from tether.store import HistoryStore, MessageRecord, database_path

    parent, child = "sess_parent", "sess_longchild"
    async with await HistoryStore.open(database_path(workspace, home)) as store:
        await store.create_session(parent, str(workspace), "ask", title="parent")
        link = {"parentSessionId": parent, "parentCallId": "d1"}
        await store.create_session(child, str(workspace), "ask", title="↳ long", metadata=link)
        call = {"id": "d1", "name": "delegate", "arguments": {"task": "Read every part."}}
        await store.begin_turn(parent, "turn_p", MessageRecord("user", {"role": "user", "content": [_block("go")]}))
        await store.append_messages(
            parent, "turn_p", [MessageRecord("assistant", {"role": "assistant", "tool_calls": [call]})]
        )
        for t in range(turns):
            await store.begin_turn(
                child, f"turn_c{t}", MessageRecord("user", {"role": "user", "content": [_block(f"part {t}")]})
            )
            steps = []
            for n in (1, 2):
                call_id = f"c{t}_{n}"
                steps.append(
                    {
                        "role": "assistant",
                        "text": f"Reading {t}.{n}.",
                        "tool_calls": [{"id": call_id, "name": "read_file", "arguments": {"path": f"p{t}_{n}.py"}}],
                    }
                )
                steps.append(
                    {
                        "role": "tool",
                        "tool_call_id": call_id,
                        "name": "read_file",
                        "content": f"part {t}.{n}",
                        "is_error": False,
                    }
                )
            steps.append({"role": "assistant", "text": f"Part {t} read."})
            await store.append_messages(child, f"turn_c{t}", [MessageRecord(b["role"], b) for b in steps])
            await store.finish_turn(f"turn_c{t}", "complete", "end_turn")
        result = {"role": "tool", "tool_call_id": "d1", "name": "delegate", "content": "All read.", "is_error": False}
        answer = {"role": "assistant", "text": "The sub-agent read them."}
        await store.append_messages(
            parent, "turn_p", [MessageRecord("tool", result), MessageRecord("assistant", answer)]
        )
        await store.finish_turn("turn_p", "complete", "end_turn")
    return parent, child


def _block(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


async def test_a_long_childs_replay_is_read_in_pages_and_shown_whole_in_place(
    spawn_daemon, workspace: Path, tether_home: Path, tmp_path: Path
):
    parent, child = await _long_child(tether_home, workspace, 220)  # 1,320 messages: two pages and a part
    script = _write(tmp_path, [])
    window = await _replayed(spawn_daemon, script, workspace, parent)
    alone = await _replayed(spawn_daemon, script, workspace, child)

    mine = window.of(child)
    own = alone.of(child)
    done = own.index({"sessionUpdate": "replay_complete"})
    assert mine == own[:done]  # all of it, in order, as its own replay shows it
    assert len([u for u in mine if u["sessionUpdate"] == "tool_call_update"]) == 440
    assert all(u["status"] == "completed" for u in mine if u["sessionUpdate"] == "tool_call_update")
    # in place: after its announcement, before the parent's next update (the call's answer)
    order = [s for s, _u in window.updates]
    (announced,) = window.of(parent, "subagent_update")
    at = window.updates.index((parent, announced))
    assert order[at + 1 : at + 1 + len(mine)] == [child] * len(mine)
    assert window.updates[at + 1 + len(mine)] == (parent, window.of(parent, "agent_message")[-1])
