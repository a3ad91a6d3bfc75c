"""Reading hook answers (Tether's and Claude Code's shapes) and the [hooks] tables, in process."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from tether.config import load_settings
from tether.hooks.answers import HookAnswer, read_answer
from tether.hooks.config import HookSet, load_hooks
from tether.hooks.runner import HookRun

if TYPE_CHECKING:
    from pathlib import Path


def ran(stdout: object = "", *, code: int = 0, stderr: str = "") -> HookRun:
    text = stdout if isinstance(stdout, str) else json.dumps(stdout)
    return HookRun(text, stderr, code)


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        (ran(""), HookAnswer()),
        (ran({"decision": "allow", "reason": "fine"}), HookAnswer("allow", "fine")),
        (ran({"decision": "approve"}), HookAnswer("allow")),
        (ran({"decision": "block", "reason": "no"}), HookAnswer("deny", "no")),
        (
            ran({"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "hm"}}),
            HookAnswer("ask", "hm"),
        ),
        (
            ran({"hookSpecificOutput": {"updatedInput": {"command": "ls"}}}),
            HookAnswer("modify", arguments={"command": "ls"}),
        ),
        (ran({"hookSpecificOutput": {"additionalContext": "ctx"}}), HookAnswer(context="ctx")),
        (ran({"continue": False, "stopReason": "stop"}), HookAnswer("deny", "stop")),
        (ran({"hookSpecificOutput": {"decision": {"behavior": "deny", "message": "m"}}}), HookAnswer("deny", "m")),
        (ran(code=2, stderr="nope\n"), HookAnswer("deny", "nope")),
    ],
)
def test_answers_in_both_shapes(run: HookRun, expected: HookAnswer) -> None:
    assert read_answer(run) == expected


@pytest.mark.parametrize(
    ("run", "problem"),
    [
        (ran("[1, 2]"), "answered JSON that is not an object"),
        (ran({"decision": "maybe"}), "answered decision 'maybe'; use allow, deny, ask or modify"),
        (ran({"decision": "modify"}), "answered decision modify without `arguments`"),
        (ran({"arguments": [1]}), "answered `arguments` that are not a JSON object"),
        (ran({"reason": 3, "decision": "deny"}), "answered a `reason` or `context` that is not a string"),
        (ran(code=1, stderr="boom"), "exited with code 1: boom"),
        (HookRun("", "", None, "timed out after 1 s"), "timed out after 1 s"),
    ],
)
def test_anything_else_is_a_problem(run: HookRun, problem: str) -> None:
    assert read_answer(run) == HookAnswer(problem=problem)


def test_hooks_are_read_from_both_shapes_with_matchers_and_timeouts(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    user.write_text(
        "[hooks]\ntimeout = 4\n"
        '[[hooks.pre_tool]]\ncommand = "a"\ntool = ["run_*", "edit_file"]\nargs = "*rm*"\n'
        '[[hooks.PostToolUse]]\nmatcher = "Bash|Write"\nhooks = [{type = "command", command = "b", timeout = 2}]\n'
    )
    found = load_hooks(user, tmp_path, tmp_path / "home")
    a, b = found.specs
    assert (a.stage, a.tools, a.args, a.timeout) == ("pre_tool", ("run_*", "edit_file"), (("*", "*rm*"),), 4.0)
    assert (b.stage, b.tools, b.timeout) == ("post_tool", ("run_command", "write_file"), 2.0)
    assert found.for_stage("pre_tool", "run_command", {"command": "rm -rf x"}) == [a]
    assert found.for_stage("pre_tool", "run_command", {"command": "ls"}) == []
    assert found.for_stage("pre_tool", "read_file", {"path": "rm"}) == []


def test_a_workspace_hooks_table_is_refused_in_the_settings_and_not_loaded(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text("")
    workspace = tmp_path / "ws"
    (workspace / ".tether").mkdir(parents=True)
    (workspace / ".tether" / "config.toml").write_text('[[hooks.pre_tool]]\ncommand = "evil"\n')
    settings = load_settings(workspace, user_config=user, env={})
    (refused,) = settings.refused
    assert refused.key == "hooks" and "a workspace must not add hooks (they run programs)" in refused.reason
    found = load_hooks(user, workspace, tmp_path / "home")
    assert found.specs == () and "were not run" in found.notices[0]
    user.write_text(f'[workspaces."{workspace}"]\ntrust_hooks = true\n')
    assert [s.command for s in load_hooks(user, workspace, tmp_path / "home").specs] == ["evil"]
    assert load_settings(workspace, user_config=user, env={}).refused == ()  # trusted: not refused


def test_trusted_hooks_stop_when_their_table_or_a_workspace_file_they_run_changes(tmp_path: Path) -> None:
    """The digest pinned at first use covers the [hooks] table and the workspace files a
    hook's command names (a script a command rewrites); other keys of the file do not count."""
    home, user, workspace = tmp_path / "home", tmp_path / "user.toml", tmp_path / "ws"
    (workspace / ".tether").mkdir(parents=True)
    (workspace / "guard.sh").write_text("exit 0\n")
    config = workspace / ".tether" / "config.toml"
    config.write_text('mode = "ask"\n[[hooks.pre_tool]]\ncommand = "sh ./guard.sh --quiet"\n')
    user.write_text(f'[workspaces."{workspace}"]\ntrust_hooks = true\n')
    assert [s.command for s in load_hooks(user, workspace, home).specs] == ["sh ./guard.sh --quiet"]
    config.write_text('mode = "read-only"\n[[hooks.pre_tool]]\ncommand = "sh ./guard.sh --quiet"\n')
    assert len(load_hooks(user, workspace, home).specs) == 1  # another setting changed: still trusted
    (workspace / "guard.sh").write_text('echo \'{"decision": "allow"}\'\n')
    found = load_hooks(user, workspace, home)
    assert found.specs == () and "changed since you trusted them and were not run" in found.alerts[0]
    (workspace / "guard.sh").write_text("exit 0\n")  # back as trusted: runs again
    assert len(load_hooks(user, workspace, home).specs) == 1
    (home / "trusted_hooks.json").write_text("not json")  # an unreadable record: fail closed
    found = load_hooks(user, workspace, home)
    assert found.specs == () and "cannot be read or written" in found.alerts[0]


def test_hooks_added_to_a_trusted_workspace_that_had_none_are_a_change(tmp_path: Path) -> None:
    """Trusting a workspace pins "no hooks" too: a [hooks] table a command adds later waits
    for `tether hooks trust`."""
    home, user, workspace = tmp_path / "home", tmp_path / "user.toml", tmp_path / "ws"
    (workspace / ".tether").mkdir(parents=True)
    user.write_text(f'[workspaces."{workspace}"]\ntrust_hooks = true\n')
    assert load_hooks(user, workspace, home) == HookSet()  # nothing to run; "no hooks" pinned
    (workspace / ".tether" / "config.toml").write_text('[[hooks.pre_tool]]\ncommand = "added"\n')
    found = load_hooks(user, workspace, home)
    assert found.specs == () and "changed since you trusted them" in found.alerts[0]


def test_a_link_a_trusted_hook_runs_is_pinned_by_where_it_points(tmp_path: Path) -> None:
    home, user, workspace = tmp_path / "home", tmp_path / "user.toml", tmp_path / "ws"
    (workspace / ".tether").mkdir(parents=True)
    for name in ("a", "b"):
        (tmp_path / f"{name}.sh").write_text("exit 0\n")  # the same text outside the workspace
    (workspace / "guard").symlink_to(tmp_path / "a.sh")
    (workspace / ".tether" / "config.toml").write_text('[[hooks.pre_tool]]\ncommand = "sh ./guard"\n')
    user.write_text(f'[workspaces."{workspace}"]\ntrust_hooks = true\n')
    assert len(load_hooks(user, workspace, home).specs) == 1
    (workspace / "guard").unlink()
    (workspace / "guard").symlink_to(tmp_path / "b.sh")
    found = load_hooks(user, workspace, home)
    assert found.specs == () and "changed since you trusted them" in found.alerts[0]
