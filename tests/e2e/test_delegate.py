"""Sub-agents over real stdio: the `delegate` tool runs a child turn with its own context.

The daemon is a real subprocess with the scripted provider, whose replies marked
`"purpose": "delegate"` answer the sub-agents' requests only (the parent's replies never
answer them); the child transcript is a real stored session loaded with session/load.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from daemon_harness import User
from tether.store import database_path


def script(tmp_path: Path, replies: list[dict]) -> Path:
    path = tmp_path / "delegate.json"
    path.write_text(json.dumps({"replies": replies}))
    return path


def child(step: int, user: str | None = None, **reply: object) -> dict:
    when: dict = {"purpose": "delegate", "step": step}
    if user is not None:
        when["user"] = user
    return {"when": when, **reply}


def delegate_call(call_id: str, task: str, **more: object) -> dict:
    return {"id": call_id, "name": "delegate", "arguments": {"task": task, **more}}


def read(path: str, call_id: str | None = None) -> dict:
    call: dict = {"name": "read_file", "arguments": {"path": path}}
    if call_id:
        call["id"] = call_id
    return call


def text(update: dict) -> str:
    return "".join(b.get("content", {}).get("text", "") for b in update.get("content") or [])


def final(updates: list[dict], call_id: str) -> dict:
    return [u for u in updates if u.get("toolCallId") == call_id and u.get("status") in ("completed", "failed")][-1]


def tether_meta(update: dict) -> dict:
    return (update.get("_meta") or {}).get("tether") or {}


def child_session_of(updates: list[dict], call_id: str) -> str:
    (found,) = {
        tether_meta(u)["childSessionId"]
        for u in updates
        if u.get("toolCallId") == call_id and "childSessionId" in tether_meta(u)
    }
    return found


READ_AND_ANSWER = [
    {"when": {"step": 1}, "tool_calls": [delegate_call("d1", "Read README.md and say whom it greets.")]},
    child(1, tool_calls=[read("README.md")]),
    child(2, text="It greets the sample workspace."),
    {"when": {"step": 2}, "text": "The sub-agent read it."},
]


@pytest.mark.parametrize("framing", ["ndjson", "lsp"])
async def test_a_delegation_reads_files_and_its_answer_is_the_calls_result(
    spawn_daemon, workspace: Path, tmp_path: Path, framing: str, daemon_env: dict[str, str]
) -> None:
    daemon = await spawn_daemon(script=script(tmp_path, READ_AND_ANSWER), framing=framing)
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("find out whom the README greets")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    done = final(updates, "d1")
    assert done["status"] == "completed"
    assert text(done).startswith("It greets the sample workspace.") and "1 step" not in text(done)
    # the child's call is nested under the delegate call: its own id, the parent's in _meta
    nested = [u for u in updates if u.get("toolCallId") == "d1/call_1_1"]
    assert nested[0]["sessionUpdate"] == "tool_call"
    assert all(tether_meta(u)["parentCallId"] == "d1" for u in nested)
    assert nested[-1]["status"] == "completed" and "Hello from the sample workspace" in text(nested[-1])
    # the delegate call's progress: the child's tool call as a short line, then what it said
    progress = [text(u) for u in updates if u.get("toolCallId") == "d1" and "childSessionId" in tether_meta(u)]
    assert "• Read README.md ✓" in progress[-1] and "It greets the sample workspace." in progress[-1]
    # the parent's own text is not mixed with the child's
    said = "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")
    assert said == "The sub-agent read it."

    # the child's transcript is a stored session: its own context (the task, not the parent's prompt)
    child_id = child_session_of(updates, "d1")
    other = await spawn_daemon(script=script(tmp_path, READ_AND_ANSWER), framing=framing)
    loaded = await other.client.load_session(child_id, workspace)
    replay = loaded.updates
    users = "".join(u["content"]["text"] for u in replay if u["sessionUpdate"] == "user_message_chunk")
    assert users == "Read README.md and say whom it greets."
    assert any(u.get("sessionUpdate") == "tool_call" and u.get("title") == "Read README.md" for u in replay)
    answer = "".join(u["content"]["text"] for u in replay if u["sessionUpdate"] == "agent_message_chunk")
    assert "It greets the sample workspace." in answer
    # a picker lists the user's sessions only; a client that asks gets the children, each naming its parent
    assert [s["sessionId"] for s in await other.client.list_sessions(workspace)] == [session.id]
    every = await other.client.request(
        "session/list", {"cwd": str(workspace), "_meta": {"tether": {"includeChildren": True}}}
    )
    listed = {s["sessionId"]: s for s in every["sessions"]}
    assert set(listed) == {session.id, child_id}
    assert listed[child_id]["title"].startswith("↳ Read README.md")
    assert listed[child_id]["_meta"]["tether"] == {"parentSessionId": session.id, "parentCallId": "d1"}
    assert "_meta" not in listed[session.id]
    latest = await other.client.request("_tether/session/latest", {"cwd": str(workspace)})
    assert latest["sessionId"] == session.id  # "where I left off" is never a sub-agent's session
    for flags, shown in (([], [session.id]), (["--all"], [session.id, child_id])):  # the shell agrees
        printed = subprocess.run(
            [sys.executable, "-m", "tether", "sessions", "list", "-w", str(workspace), *flags],
            env=daemon_env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        assert sorted(line.split()[0] for line in printed.splitlines()[1:]) == sorted(shown), printed


async def test_two_delegations_in_one_step_run_in_parallel(spawn_daemon, workspace: Path, tmp_path: Path) -> None:
    replies = [
        {
            "when": {"step": 1},
            "tool_calls": [delegate_call("da", "alpha: read README.md"), delegate_call("db", "beta: read src/app.py")],
        },
        child(1, "^alpha", tool_calls=[read("README.md")]),
        child(2, "^alpha", text="alpha found a greeting", delay_ms=50),
        child(1, "^beta", tool_calls=[read("src/app.py")]),
        child(2, "^beta", text="beta found main returning 42", delay_ms=50),
        {"when": {"step": 2}, "text": "Both done."},
    ]
    daemon = await spawn_daemon(script=script(tmp_path, replies))
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("investigate both")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    assert text(final(updates, "da")).startswith("alpha found a greeting")
    assert text(final(updates, "db")).startswith("beta found main returning 42")
    assert child_session_of(updates, "da") != child_session_of(updates, "db")
    a_call = [i for i, u in enumerate(updates) if u.get("toolCallId") == "da/call_1_1"]
    b_call = [i for i, u in enumerate(updates) if u.get("toolCallId") == "db/call_1_1"]
    assert {tether_meta(updates[i])["parentCallId"] for i in a_call} == {"da"}
    assert {tether_meta(updates[i])["parentCallId"] for i in b_call} == {"db"}
    assert "Hello from the sample workspace" in text(updates[a_call[-1]])
    assert "return 42" in text(updates[b_call[-1]])
    # in parallel: each child's first call started before either delegation ended
    first_end = min(updates.index(final(updates, "da")), updates.index(final(updates, "db")))
    assert a_call[0] < first_end and b_call[0] < first_end


WRITE_TASK = [
    {"when": {"step": 1}, "tool_calls": [delegate_call("dw", "Write NOTES.md saying hi.", writes=True)]},
    child(1, tool_calls=[{"name": "write_file", "arguments": {"path": "NOTES.md", "content": "hi\n"}}]),
    child(2, text="Wrote NOTES.md."),
    {"when": {"step": 2}, "text": "ok"},
]


async def test_a_write_delegation_is_approved_and_the_childs_write_asks_under_it(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    user = User("allow_once", "allow_once")
    daemon = await spawn_daemon(script=script(tmp_path, WRITE_TASK), framing="ndjson")
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("have a helper write the notes")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    delegation, write = user.prompts
    assert delegation["toolCall"]["toolCallId"] == "dw"
    assert delegation["toolCall"]["title"] == "Delegate (with writes): Write NOTES.md saying hi."
    assert "parentCallId" not in delegation["_meta"]["tether"]
    assert write["sessionId"] == session.id  # the session the client knows
    assert write["toolCall"]["toolCallId"] == "dw/call_1_1"
    assert write["_meta"]["tether"]["parentCallId"] == "dw"
    assert write["toolCall"]["content"][0]["type"] == "diff"
    assert (workspace / "NOTES.md").read_text() == "hi\n"
    assert text(final(updates, "dw")).startswith("Wrote NOTES.md.")


async def test_a_write_delegation_is_refused_in_read_only_mode_and_a_read_one_runs_unasked(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    replies = [
        {"when": {"step": 1}, "tool_calls": [delegate_call("dw", "Write NOTES.md.", writes=True)]},
        {"when": {"step": 2}, "tool_calls": [delegate_call("dr", "Read README.md.")]},
        child(1, tool_calls=[read("README.md")]),
        child(2, text="It is a sample."),
        {"when": {"step": 3}, "text": "ok"},
    ]
    user = User()
    daemon = await spawn_daemon("--mode", "read-only", script=script(tmp_path, replies))
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("try both")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn" and user.prompts == []
    refused = final(updates, "dw")
    assert refused["status"] == "failed" and "not allowed in read-only mode: delegate" in text(refused)
    assert not any(u.get("toolCallId", "").startswith("dw/") for u in updates)  # no child ran
    assert text(final(updates, "dr")).startswith("It is a sample.")
    every = await daemon.client.request(
        "session/list", {"cwd": str(workspace), "_meta": {"tether": {"includeChildren": True}}}
    )
    titles = [s.get("title") for s in every["sessions"]]
    assert sum(1 for t in titles if t and t.startswith("↳")) == 1


async def test_cancel_reaches_the_child_and_its_transcript_is_kept_cancelled(
    spawn_daemon, workspace: Path, tmp_path: Path, tether_home: Path
) -> None:
    slow = " ".join(f"word{i}" for i in range(200))
    replies = [
        {"when": {"step": 1}, "tool_calls": [delegate_call("d1", "Read README.md slowly.")]},
        child(1, tool_calls=[read("README.md")]),
        child(2, text=slow, delay_ms=30),
        {"when": {"step": 2}, "text": "never"},
    ]
    daemon = await spawn_daemon(script=script(tmp_path, replies))
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("go")
    updates = []
    async for update in turn:
        updates.append(update)
        if update.get("toolCallId") == "d1/call_1_1" and update.get("status") == "completed":
            await asyncio.sleep(0.3)  # the child's second step is streaming
            turn.cancel()
    assert turn.stop_reason == "cancelled"
    assert final(updates, "d1")["status"] == "failed"
    child_id = child_session_of(updates, "d1")
    other = await spawn_daemon(script=script(tmp_path, replies))
    loaded = await other.client.load_session(child_id, workspace)
    chunks = [u for u in loaded.updates if u["sessionUpdate"] == "agent_message_chunk"]
    assert "word199" not in "".join(c["content"]["text"] for c in chunks)  # stopped part way
    assert not chunks or chunks[-1]["_meta"]["tether"]["status"] == "cancelled"
    with sqlite3.connect(database_path(workspace, tether_home)) as db:
        statuses = db.execute("SELECT session_id, status FROM turns ORDER BY started_at").fetchall()
    assert statuses == [(session.id, "cancelled"), (child_id, "cancelled")]


async def test_the_step_cap_is_bounded_by_the_setting_and_stops_the_child(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    replies = [
        {"when": {"step": 1}, "tool_calls": [delegate_call("big", "Loop.", max_steps=5)]},
        {"when": {"step": 2}, "tool_calls": [delegate_call("cap", "Loop.", max_steps=2)]},
        child(1, tool_calls=[read("README.md")], text="looking"),
        child(2, tool_calls=[read("src/app.py")], text="still looking"),
        {"when": {"step": 3}, "text": "ok"},
    ]
    daemon = await spawn_daemon(script=script(tmp_path, replies), env={"TETHER_DELEGATE_MAX_STEPS": "3"})
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("loop")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    big = final(updates, "big")
    assert big["status"] == "failed" and "max_steps" in text(big) and "3" in text(big)
    capped = final(updates, "cap")
    assert capped["status"] == "failed"
    assert text(capped).startswith("step cap reached: the sub-agent took its 2 steps without finishing")
    assert "still looking" in text(capped) and "2 steps" in text(capped)


async def test_the_token_budget_stops_the_child_with_budget_spent(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    replies = [
        {"when": {"step": 1}, "tool_calls": [delegate_call("d1", "Read everything.")]},
        child(1, tool_calls=[read("README.md")], text="reading", usage={"input_tokens": 900, "output_tokens": 200}),
        child(2, text="never reached"),
        {"when": {"step": 2}, "text": "ok"},
    ]
    daemon = await spawn_daemon(script=script(tmp_path, replies), env={"TETHER_DELEGATE_TOKENS": "1000"})
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("read")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    done = final(updates, "d1")
    assert done["status"] == "failed"
    assert text(done).startswith("budget spent: the sub-agent used 1100 of its 1000 tokens")
    assert "reading" in text(done) and "never reached" not in text(done)


async def test_delegate_off_means_the_model_has_no_such_tool(spawn_daemon, workspace: Path, tmp_path: Path) -> None:
    daemon = await spawn_daemon(script=script(tmp_path, READ_AND_ANSWER), env={"TETHER_DELEGATE": "off"})
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("find out")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    done = final(updates, "d1")
    assert done["status"] == "failed" and "unknown tool 'delegate'" in text(done)


async def test_the_users_hooks_decide_the_childs_calls_too(spawn_daemon, workspace: Path, tmp_path: Path) -> None:
    hook = Path(__file__).resolve().parent.parent / "hooks" / "hook_script.py"
    config = tmp_path / "xdg-config" / "tether" / "config.toml"  # XDG_CONFIG_HOME of daemon_env
    config.parent.mkdir(parents=True)
    command = json.dumps(f"{sys.executable} {hook} deny")
    config.write_text(f'[[hooks.pre_tool]]\ncommand = {command}\ntool = "read_file"\nname = "guard"\n')
    replies = [
        {"when": {"step": 1}, "tool_calls": [delegate_call("d1", "Read README.md.")]},
        child(1, tool_calls=[read("README.md")]),
        child(2, text="I was not allowed to read it."),
        {"when": {"step": 2}, "text": "ok"},
    ]
    daemon = await spawn_daemon(script=script(tmp_path, replies))
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("read it through a helper")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    refused = final(updates, "d1/call_1_1")
    assert refused["status"] == "failed" and text(refused) == "refused by hook guard: no pushing on Fridays"
    assert text(final(updates, "d1")).startswith("I was not allowed to read it.")


WAIT_FOR_GO = "for i in $(seq 1 600); do [ -f go ] && break; sleep 0.05; done; echo waited"


async def test_a_child_follows_the_parents_mode_switched_while_it_runs(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    """Issue 30 item 5: the parent is switched from full-auto to ask while its writing child
    waits; the child's next write and command ask (and are rejected), nothing changes."""
    replies = [
        {"when": {"step": 1}, "tool_calls": [delegate_call("dw", "Write NOTES.md, then run a command.", writes=True)]},
        child(1, tool_calls=[{"name": "run_command", "arguments": {"command": WAIT_FOR_GO}}]),
        child(2, tool_calls=[{"name": "write_file", "arguments": {"path": "NOTES.md", "content": "hi\n"}}]),
        child(3, tool_calls=[{"name": "run_command", "arguments": {"command": "echo ran > RAN.txt"}}]),
        child(4, text="Both were refused."),
        {"when": {"step": 2}, "text": "ok"},
    ]
    user = User("reject_once", "reject_once")
    daemon = await spawn_daemon(
        "--mode", "full-auto", script=script(tmp_path, replies), env={"TETHER_SANDBOX": "bwrap"}
    )
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("have a helper write the notes")
    updates = []
    async for update in turn:
        updates.append(update)
        if update.get("toolCallId") == "dw/call_1_1" and update.get("status") == "in_progress":
            # the child's command runs unasked (full-auto) and waits: now the user switches to ask
            await daemon.client.request("session/set_mode", {"sessionId": session.id, "modeId": "ask"})
            (workspace / "go").write_text("")
    assert turn.stop_reason == "end_turn"
    assert "waited" in text(final(updates, "dw/call_1_1"))
    asked = [p["toolCall"]["toolCallId"] for p in user.prompts]
    assert asked == ["dw/call_2_1", "dw/call_3_1"]  # the write and the command, each asked
    assert all(p["_meta"]["tether"]["parentCallId"] == "dw" for p in user.prompts)
    assert final(updates, "dw/call_2_1")["status"] == "failed"
    assert final(updates, "dw/call_3_1")["status"] == "failed"
    assert not (workspace / "NOTES.md").exists() and not (workspace / "RAN.txt").exists()
    assert text(final(updates, "dw")).startswith("Both were refused.")


NESTED_TASK = [
    {"when": {"step": 1}, "tool_calls": [delegate_call("dw", "Have a helper write GRAND.md.", writes=True)]},
    child(1, "^Have a helper", tool_calls=[delegate_call("gd", "Write GRAND.md saying hi.", writes=True)]),
    child(1, "^Write GRAND", tool_calls=[{"name": "write_file", "arguments": {"path": "GRAND.md", "content": "hi\n"}}]),
    child(2, text="I could not hand it on."),
    {"when": {"step": 2}, "text": "ok"},
]


async def test_a_child_cannot_delegate_so_no_grandchild_asks_under_another_sessions_id(
    spawn_daemon, workspace: Path, tmp_path: Path, tether_home: Path
) -> None:
    """A sub-agent's approvals are asked under its own session and call (ACP v2) and nested
    under its `delegate` call (v1): one level, which holds because a child has no `delegate`
    (SPEC §12.6). A child's `delegate` call fails as an unknown tool: no grandchild session
    is made, nothing is asked for it (a grandchild's approval would be put under its middle
    child's ids), nothing is written."""
    user = User("allow_once", "allow_once", "allow_once")
    daemon = await spawn_daemon(script=script(tmp_path, NESTED_TASK), framing="ndjson")
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("have helpers write the notes")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    assert [p["toolCall"]["toolCallId"] for p in user.prompts] == ["dw"]  # the delegation alone
    refused = final(updates, "dw/gd")
    assert refused["status"] == "failed" and "unknown tool 'delegate'" in text(refused)
    assert text(final(updates, "dw")).startswith("I could not hand it on.")
    assert not (workspace / "GRAND.md").exists()
    with sqlite3.connect(database_path(workspace, tether_home)) as db:
        turns = db.execute("SELECT session_id FROM turns ORDER BY started_at").fetchall()
    assert turns == [(session.id,), (child_session_of(updates, "dw"),)]  # the parent and its one child
