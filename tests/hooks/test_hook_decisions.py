"""Hooks over real stdio: pre_tool allow / deny / ask / modify, Claude Code's shapes, and
where hook decisions sit in the approval order."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from hooks_harness import (
    User,
    approved_by,
    content_text,
    final,
    hook,
    notices,
    run,
    toml_string,
    write_script,
)

if TYPE_CHECKING:
    from pathlib import Path


def pre_tool(config: Path, behaviour: str, *, tool: str = "run_command", extra: str = "") -> None:
    config.write_text(
        f'[[hooks.pre_tool]]\ncommand = {toml_string(hook(behaviour))}\ntool = "{tool}"\nname = "guard"\n{extra}'
    )


async def start(spawn_daemon, tmp_path: Path, user: User, *extra: str, framing: str = "lsp"):
    daemon = await spawn_daemon(*extra, script=write_script(tmp_path), framing=framing)
    daemon.client.peer.on_request = user.on_request
    return daemon


@pytest.mark.parametrize("framing", ["lsp", "ndjson"])
async def test_a_pre_tool_deny_refuses_the_command_and_says_why_to_the_model_and_the_user(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path, framing: str
):
    pre_tool(user_config, "deny")
    user = User()
    daemon = await start(spawn_daemon, tmp_path, user, "--mode", "full-auto", framing=framing)
    session = await daemon.client.new_session(workspace)
    turn, updates = await run(session, "push it")
    assert turn.stop_reason == "end_turn"
    assert user.prompts == []  # refused, not asked
    done = final(updates, "call_push")
    assert done["status"] == "failed"
    assert content_text(done) == "refused by hook guard: no pushing on Fridays"
    assert "[hook guard (pre_tool): denied it; reason: no pushing on Fridays]" in notices(updates)


async def test_a_pre_tool_allow_runs_a_sandboxed_command_in_ask_mode_without_asking(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    pre_tool(user_config, "allow")
    user = User()
    daemon = await start(spawn_daemon, tmp_path, user)
    session = await daemon.client.new_session(workspace)
    _, updates = await run(session, "run the tests")
    assert user.prompts == []
    assert final(updates, "call_run")["status"] == "completed"
    assert approved_by(updates, "call_run") == "allowed by hook guard: the hook trusts echo"


async def test_a_pre_tool_ask_asks_even_in_full_auto(spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path):
    pre_tool(user_config, "ask")
    user = User("reject_once")
    daemon = await start(spawn_daemon, tmp_path, user, "--mode", "full-auto")
    session = await daemon.client.new_session(workspace)
    _, updates = await run(session, "run the tests")
    (prompt,) = user.prompts
    assert prompt["_meta"]["tether"]["reason"] == "asked by hook guard: the hook wants a human"
    assert final(updates, "call_run")["status"] == "failed"


async def test_a_pre_tool_ask_on_a_read_only_tool_asks_the_user(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    pre_tool(user_config, "ask", tool="read_file")
    user = User("allow_once")
    daemon = await start(spawn_daemon, tmp_path, user)
    session = await daemon.client.new_session(workspace)
    _, updates = await run(session, "read the readme")
    assert len(user.prompts) == 1 and user.prompts[0]["toolCall"]["toolCallId"] == "call_read"
    assert "Hello from the sample workspace." in content_text(final(updates, "call_read"))


async def test_a_pre_tool_modify_changes_the_arguments_the_tool_runs_with(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    pre_tool(user_config, "modify")
    user = User()
    daemon = await start(spawn_daemon, tmp_path, user, "--mode", "full-auto")
    session = await daemon.client.new_session(workspace)
    _, updates = await run(session, "run the tests")
    shown = [u for u in updates if u.get("toolCallId") == "call_run" and "rawInput" in u]
    assert shown[-1]["rawInput"] == {"command": "echo modified by the hook"}
    assert "modified by the hook" in content_text(final(updates, "call_run"))
    assert "[hook guard (pre_tool): changed the arguments]" in notices(updates)


async def test_deny_rules_come_before_a_hooks_allow(spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path):
    pre_tool(user_config, "allow")  # `git push` is a built-in deny rule
    user = User()
    daemon = await start(spawn_daemon, tmp_path, user, "--mode", "full-auto")
    session = await daemon.client.new_session(workspace)
    _, updates = await run(session, "push it")
    assert user.prompts == []
    assert "refused by built-in rule: deny `git push`" in content_text(final(updates, "call_push"))


async def test_read_only_mode_comes_before_a_hooks_allow(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    pre_tool(user_config, "allow", tool="delete_path")
    user = User()
    daemon = await start(spawn_daemon, tmp_path, user, "--mode", "read-only")
    session = await daemon.client.new_session(workspace)
    _, updates = await run(session, "delete src/app.py")
    assert "not allowed in read-only mode" in content_text(final(updates, "call_del"))
    assert (workspace / "src" / "app.py").exists()


@pytest.mark.parametrize(
    ("behaviour", "status", "said"),
    [
        ("claude_block", "failed", "refused by hook guard: claude says no"),
        ("claude_deny", "failed", "refused by hook guard: denied the Claude Code way"),
        ("exit2", "failed", "refused by hook guard: blocked through exit code 2"),
    ],
)
async def test_claude_code_shapes_deny(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path, behaviour: str, status: str, said: str
):
    # Claude Code's own config shape: event name, matcher with its tool name, nested hooks
    user_config.write_text(
        f'[[hooks.PreToolUse]]\nmatcher = "Bash"\n'
        f'hooks = [{{type = "command", command = {toml_string(hook(behaviour))}, name = "guard"}}]\n'
    )
    user = User()
    daemon = await start(spawn_daemon, tmp_path, user, "--mode", "full-auto")
    session = await daemon.client.new_session(workspace)
    _, updates = await run(session, "run the tests")
    done = final(updates, "call_run")
    assert done["status"] == status and content_text(done) == said


async def test_claude_code_approve_and_ask(spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path):
    pre_tool(user_config, "claude_approve")
    user = User("reject_once")
    daemon = await start(spawn_daemon, tmp_path, user)
    session = await daemon.client.new_session(workspace)
    _, updates = await run(session, "run the tests")
    assert user.prompts == [] and approved_by(updates, "call_run") == "allowed by hook guard: claude says fine"
    pre_tool(user_config, "claude_ask")
    _, updates = await run(session, "run the tests")
    assert user.prompts[0]["_meta"]["tether"]["reason"] == "asked by hook guard: claude asks"


async def test_a_matcher_on_another_tool_or_other_arguments_does_not_fire(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    log = workspace / "events.jsonl"
    user_config.write_text(
        f'[[hooks.pre_tool]]\ncommand = {toml_string(hook("deny", log))}\ntool = "edit_*"\n'
        f'[[hooks.pre_tool]]\ncommand = {toml_string(hook("deny", log))}\nargs = {{command = "git *"}}\n'
    )
    user = User()
    daemon = await start(spawn_daemon, tmp_path, user, "--mode", "full-auto")
    session = await daemon.client.new_session(workspace)
    _, updates = await run(session, "run the tests")
    assert final(updates, "call_run")["status"] == "completed"
    assert not log.exists()
    _, updates = await run(session, "push it")
    assert "no pushing on Fridays" in content_text(final(updates, "call_push"))
    (event,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert event["tool"] == "run_command" and event["arguments"]["command"] == "git push origin main"


@pytest.mark.parametrize(
    ("stage", "behaviour", "status", "by"),
    [
        ("permission_request", "allow", "completed", "allowed by hook p: the hook trusts echo"),
        ("PermissionRequest", "claude_permission_allow", "completed", "allowed by hook p: ok by policy"),
        ("permission_request", "deny", "failed", ""),
        ("PermissionRequest", "claude_permission_deny", "failed", ""),
    ],
)
async def test_a_permission_request_hook_answers_in_the_users_place(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path, stage: str, behaviour: str, status: str, by: str
):
    user_config.write_text(f'[[hooks.{stage}]]\ncommand = {toml_string(hook(behaviour))}\nname = "p"\n')
    user = User()
    daemon = await start(spawn_daemon, tmp_path, user)
    session = await daemon.client.new_session(workspace)
    _, updates = await run(session, "run the tests")
    assert user.prompts == []  # decided without asking
    done = final(updates, "call_run")
    assert done["status"] == status
    if by:
        assert approved_by(updates, "call_run") == by
    else:
        assert content_text(done).startswith("refused by hook p: ")


async def test_a_permission_request_allow_never_approves_an_unsandboxed_command(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    user_config.write_text(
        f'sandbox = "off"\n[[hooks.permission_request]]\ncommand = {toml_string(hook("allow"))}\nname = "p"\n'
    )
    user = User("reject_once")
    daemon = await start(spawn_daemon, tmp_path, user)
    session = await daemon.client.new_session(workspace)
    _, updates = await run(session, "run the tests")
    assert len(user.prompts) == 1  # the user still decides
    assert final(updates, "call_run")["status"] == "failed"
