"""Changing the workspace over real stdio: approvals, modes, rules, commands, plans."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from daemon_harness import EXAMPLES

SCRIPT = EXAMPLES / "approvals.json"


class User:
    """A scripted ACP client user: answers permission prompts from a list, records them."""

    def __init__(self, *answers: str | dict) -> None:
        self.answers = list(answers)
        self.prompts: list[dict] = []
        self.gate: asyncio.Event | None = None

    async def on_request(self, method: str, params: dict):
        assert method == "session/request_permission", method
        self.prompts.append(params)
        if self.gate is not None:
            await self.gate.wait()
        answer = self.answers.pop(0)
        if isinstance(answer, dict):
            return answer
        return {"outcome": {"outcome": "selected", "optionId": answer}}


async def start(spawn_daemon, user: User | None = None, *extra: str, env: dict | None = None):
    daemon = await spawn_daemon(*extra, script=SCRIPT, env=env)
    if user is not None:
        daemon.client.peer.on_request = user.on_request
    return daemon


async def run(session, text: str):
    turn = session.prompt(text)
    updates = [u async for u in turn]
    return turn, updates


def final(updates: list[dict], call_id: str) -> dict:
    return [u for u in updates if u.get("toolCallId") == call_id and u.get("status") in ("completed", "failed")][-1]


def text(update: dict) -> str:
    return "".join(b.get("content", {}).get("text", "") for b in update.get("content") or [])


async def test_allow_once_edits_the_file_after_showing_the_diff(spawn_daemon, workspace: Path):
    user = User("allow_once")
    daemon = await start(spawn_daemon, user)
    session = await daemon.client.new_session(workspace)
    turn, updates = await run(session, "edit the readme")
    assert turn.stop_reason == "end_turn"
    (prompt,) = user.prompts
    call = prompt["toolCall"]
    assert call["toolCallId"] == "call_edit" and call["kind"] == "edit"
    (diff,) = call["content"]
    assert diff["type"] == "diff" and diff["path"] == str(workspace / "README.md")
    assert "Hello from the sample workspace." in diff["oldText"]
    assert "Hello, edited by Tether." in diff["newText"]
    assert {o["optionId"] for o in prompt["options"]} == {"allow_once", "allow_always", "reject_once", "reject_always"}
    assert "mode ask" in prompt["_meta"]["tether"]["reason"]
    # the diff was on the tool call before approval, the unified diff after
    before = [
        u
        for u in updates
        if u.get("toolCallId") == "call_edit" and any(b.get("type") == "diff" for b in u.get("content") or [])
    ]
    assert before
    done = final(updates, "call_edit")
    assert done["status"] == "completed" and "+Hello, edited by Tether." in text(done)
    assert (workspace / "README.md").read_text() == "# Sample\n\nHello, edited by Tether.\n"


async def test_reject_goes_back_to_the_model_and_the_turn_continues(spawn_daemon, workspace: Path):
    user = User("reject_once")
    daemon = await start(spawn_daemon, user)
    session = await daemon.client.new_session(workspace)
    turn, updates = await run(session, "edit the readme")
    assert turn.stop_reason == "end_turn"
    done = final(updates, "call_edit")
    assert done["status"] == "failed" and "the user rejected editing README.md" in text(done)
    assert "Hello from the sample workspace." in (workspace / "README.md").read_text()


async def test_allow_always_creates_a_listed_rule_and_the_next_time_asks_nobody(spawn_daemon, workspace: Path):
    user = User("allow_always")
    daemon = await start(spawn_daemon, user)
    session = await daemon.client.new_session(workspace)
    await run(session, "run the tests")
    assert len(user.prompts) == 1
    _turn, updates = await run(session, "run the tests")
    assert len(user.prompts) == 1  # not asked again
    done = final(updates, "call_run")
    assert done["status"] == "completed" and "all passed" in text(done)
    running = [u for u in updates if u.get("toolCallId") == "call_run" and u.get("status") == "in_progress"]
    assert "rule #" in running[0]["_meta"]["tether"]["approvedBy"]
    rules = (await daemon.client.request("_tether/rules/list", {"sessionId": session.id}))["rules"]
    mine = [r for r in rules if r["source"] == "user"]
    assert {(r["kind"], r["pattern"], r["decision"]) for r in mine} == {("execute", "echo", "allow")}
    await daemon.client.request("_tether/rules/remove", {"sessionId": session.id, "id": mine[0]["id"]})
    user.answers.append("reject_once")
    await run(session, "run the tests")
    assert len(user.prompts) == 2  # asked again once the rule is gone


async def test_reject_always_refuses_without_asking_next_time(spawn_daemon, workspace: Path):
    user = User("reject_always")
    daemon = await start(spawn_daemon, user)
    session = await daemon.client.new_session(workspace)
    await run(session, "run the tests")
    _turn, updates = await run(session, "run the tests")
    assert len(user.prompts) == 1
    assert "deny" in text(final(updates, "call_run"))


async def test_cancel_while_a_prompt_is_pending_runs_nothing_and_answers_cancelled(spawn_daemon, workspace: Path):
    user = User("allow_once")
    user.gate = asyncio.Event()  # the user never answers
    daemon = await start(spawn_daemon, user)
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("run the tests")
    turn.start()
    for _ in range(200):
        if user.prompts:
            break
        await asyncio.sleep(0.02)
    assert user.prompts
    turn.cancel()
    result = await turn.wait()
    assert result["stopReason"] == "cancelled"
    # the daemon told the client to drop the prompt
    # an ACP client: ACP's spelling, `$/cancel_request {requestId}`
    cancels = [p for m, p in daemon.client.notifications if m == "$/cancel_request"]
    assert cancels, daemon.client.notifications
    assert not any(u.get("toolCallId") == "call_run" and u.get("status") == "completed" for u in turn.updates)


async def test_modes_read_only_auto_edit_and_full_auto(spawn_daemon, workspace: Path):
    user = User()
    daemon = await start(spawn_daemon, user)
    session = await daemon.client.new_session(workspace)
    await daemon.client.request("session/set_mode", {"sessionId": session.id, "modeId": "read-only"})
    _turn, updates = await run(session, "write a note")
    assert "read-only mode" in text(final(updates, "call_write"))
    assert not (workspace / "notes").exists()

    await daemon.client.request("session/set_mode", {"sessionId": session.id, "modeId": "auto-edit"})
    _turn, updates = await run(session, "write a note")
    assert (workspace / "notes" / "todo.txt").read_text() == "remember\n"
    _turn, updates = await run(session, "run the tests")
    # a plain command in the OS sandbox without the network runs unasked (sandbox_auto_allow)
    assert not user.prompts and "all passed" in text(final(updates, "call_run"))
    user.answers.append("reject_once")
    _turn, updates = await run(session, "stream output")
    assert len(user.prompts) == 1  # a loop is not plain: still asked in auto-edit

    await daemon.client.request("session/set_mode", {"sessionId": session.id, "modeId": "full-auto"})
    _turn, updates = await run(session, "run the tests")
    assert len(user.prompts) == 1 and "all passed" in text(final(updates, "call_run"))


async def test_deny_rules_win_over_full_auto(spawn_daemon, workspace: Path):
    daemon = await start(spawn_daemon, User(), "--mode", "full-auto")
    session = await daemon.client.new_session(workspace)
    _turn, updates = await run(session, "push it")
    done = final(updates, "call_push")
    assert done["status"] == "failed" and "never run" in text(done) and "git push" in text(done)


async def test_two_approvals_in_one_step_are_asked_one_at_a_time_in_order(spawn_daemon, workspace: Path):
    user = User("allow_once", "reject_once")
    daemon = await start(spawn_daemon, user)
    session = await daemon.client.new_session(workspace)
    _turn, _updates = await run(session, "edit twice")
    assert [p["toolCall"]["toolCallId"] for p in user.prompts] == ["call_e1", "call_e2"]
    assert (workspace / "README.md").read_text().startswith("# Sample (1)")
    assert "return 42" in (workspace / "src" / "app.py").read_text()


async def test_a_subset_of_hunks_is_applied_and_the_model_is_told(spawn_daemon, workspace: Path):
    (workspace / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 41)))
    answer = {
        "outcome": {"outcome": "selected", "optionId": "allow_once"},
        "_meta": {"tether": {"acceptedHunks": {str(workspace / "long.txt"): [1]}}},
    }
    user = User(answer)
    daemon = await start(spawn_daemon, user)
    session = await daemon.client.new_session(workspace)
    _turn, updates = await run(session, "two hunks")
    hunks = user.prompts[0]["_meta"]["tether"]["hunks"]
    assert [h["index"] for h in hunks] == [0, 1]
    content = (workspace / "long.txt").read_text()
    assert "line 2\n" in content and "line THIRTY\n" in content
    assert "kept" in text(final(updates, "call_hunks"))


async def test_command_output_streams_while_it_runs(spawn_daemon, workspace: Path):
    daemon = await start(spawn_daemon, User(), "--mode", "full-auto")
    session = await daemon.client.new_session(workspace)
    _turn, updates = await run(session, "stream output")
    live = [text(u) for u in updates if u.get("toolCallId") == "call_stream" and "status" not in u and u.get("content")]
    assert len(live) >= 2 and live[0].startswith("line1") and "line3" in live[-1]
    done = final(updates, "call_stream")
    assert "line1\nline2\nline3" in text(done) and "exit code 0" in text(done)


async def test_secrets_are_not_in_a_commands_environment(spawn_daemon, workspace: Path):
    """Commands get a minimal environment plus what `allow_env` names (globs allowed)."""
    env = {
        "MY_SERVICE_API_KEY": "sk-should-not-leak",
        "GITHUB_TOKEN": "ghp-leak",
        "HARMLESS": "visible",
        "NOT_LISTED": "hidden",
        "TOOL_OPTS": "listed-by-glob",
        "TETHER_ALLOW_ENV": "HARMLESS,TOOL_*",
    }
    daemon = await start(spawn_daemon, User(), "--mode", "full-auto", env=env)
    session = await daemon.client.new_session(workspace)
    _turn, updates = await run(session, "show env")
    out = text(final(updates, "call_env"))
    assert "HARMLESS=visible" in out and "TOOL_OPTS=listed-by-glob" in out
    assert "sk-should-not-leak" not in out and "ghp-leak" not in out and "NOT_LISTED" not in out


def _descendants(pid: int) -> list[int]:
    """Live processes below `pid` (the sandbox runs commands in their own PID namespace,
    so a pid the command writes down means nothing here: look from the daemon down)."""
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            fields = stat.rpartition(")")[2].split()
            if fields[0] != "Z":
                parents[int(name)] = int(fields[1])
    found = []
    for child in parents:
        up, hops = parents.get(child), 0
        while up is not None and up > 1 and hops < 64:
            if up == pid:
                found.append(child)
                break
            up, hops = parents.get(up), hops + 1
    return found


async def _wait_no_children(pid: int) -> bool:
    for _ in range(100):
        if not _descendants(pid):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_timeout_kills_the_whole_process_group(spawn_daemon, workspace: Path):
    daemon = await start(spawn_daemon, User(), "--mode", "full-auto")
    session = await daemon.client.new_session(workspace)
    _turn, updates = await run(session, "time out")
    done = final(updates, "call_to")
    assert done["status"] == "failed" and "timeout" in text(done)
    assert (workspace / "child.pid").read_text().strip()  # the background child was started
    assert await _wait_no_children(daemon.pid)


async def test_cancel_kills_a_running_command_and_its_children(spawn_daemon, workspace: Path):
    daemon = await start(spawn_daemon, User(), "--mode", "full-auto")
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("sleep long")
    async for update in turn:
        if update.get("toolCallId") == "call_sleep" and update.get("status") == "in_progress":
            for _ in range(100):
                if (workspace / "child.pid").exists() and (workspace / "child.pid").read_text().strip():
                    break
                await asyncio.sleep(0.02)
            turn.cancel()
    assert turn.stop_reason == "cancelled"
    assert (workspace / "child.pid").read_text().strip()
    assert await _wait_no_children(daemon.pid)


async def test_update_plan_sends_the_full_plan(spawn_daemon, workspace: Path):
    daemon = await start(spawn_daemon, User())
    session = await daemon.client.new_session(workspace)
    _turn, updates = await run(session, "make a plan")
    (plan,) = [u for u in updates if u["sessionUpdate"] == "plan"]
    assert plan["entries"] == [
        {"content": "Read the code", "priority": "medium", "status": "completed"},
        {"content": "Fix the bug", "priority": "high", "status": "in_progress"},
        {"content": "Run the tests", "priority": "medium", "status": "pending"},
    ]


async def test_an_edit_of_a_file_changed_since_it_was_read_is_refused(spawn_daemon, workspace: Path):
    daemon = await start(spawn_daemon, User(), "--mode", "full-auto")
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("stale edit")
    async for update in turn:
        if update.get("toolCallId") == "call_read" and update.get("status") == "completed":
            (workspace / "README.md").write_text("# Sample\n\nHello, changed by the user.\n")
    done = final(turn.updates, "call_edit")
    assert done["status"] == "failed" and "changed since you read it" in text(done)
    assert (workspace / "README.md").read_text() == "# Sample\n\nHello, changed by the user.\n"
