"""A hook that times out, crashes, answers garbage or too much: a notice, never a hung or failed
turn, and never an approval (a broken pre_tool or permission_request hook means "ask")."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from hooks_harness import User, final, hook, notices, run, toml_string, write_script

if TYPE_CHECKING:
    from pathlib import Path

FAULTS = [
    ("slow", "timed out after 1 s"),
    ("crash", "exited with code 1: Traceback: something broke"),
    ("garbage", "answered what is not JSON ('this is not json {')"),
    ("huge", "answered more than 64 KiB on stdout; its answer was ignored"),
]


@pytest.mark.parametrize(("behaviour", "said"), FAULTS)
async def test_a_broken_pre_tool_hook_asks_the_user_even_in_full_auto(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path, behaviour: str, said: str
):
    user_config.write_text(
        f'[[hooks.pre_tool]]\ncommand = {toml_string(hook(behaviour))}\nname = "guard"\ntimeout = 1\n'
    )
    user = User("allow_once")
    daemon = await spawn_daemon("--mode", "full-auto", script=write_script(tmp_path))
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    turn, updates = await run(session, "run the tests")
    assert turn.stop_reason == "end_turn"
    assert f"[hook guard (pre_tool) {said}; the user is asked instead]" in notices(updates)
    (prompt,) = user.prompts
    assert prompt["_meta"]["tether"]["reason"] == f"asked by hook guard: hook guard (pre_tool) {said}"
    assert final(updates, "call_run")["status"] == "completed"  # the user allowed it


@pytest.mark.parametrize(("behaviour", "said"), FAULTS[1:])
async def test_a_broken_observing_hook_is_a_notice_and_the_turn_goes_on(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path, behaviour: str, said: str
):
    user_config.write_text(f'[[hooks.post_tool]]\ncommand = {toml_string(hook(behaviour))}\nname = "audit"\n')
    daemon = await spawn_daemon("--mode", "full-auto", script=write_script(tmp_path))
    session = await daemon.client.new_session(workspace)
    turn, updates = await run(session, "run the tests")
    assert turn.stop_reason == "end_turn"
    assert f"[hook audit (post_tool) {said}; ignored]" in notices(updates)
    assert final(updates, "call_run")["status"] == "completed"


async def test_a_broken_permission_request_hook_asks_the_user(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    user_config.write_text(f'[[hooks.permission_request]]\ncommand = {toml_string(hook("crash"))}\nname = "p"\n')
    user = User("reject_once")
    daemon = await spawn_daemon(script=write_script(tmp_path))
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    _, updates = await run(session, "run the tests")
    assert len(user.prompts) == 1
    assert "[hook p (permission_request) exited with code 1" in notices(updates)
    assert final(updates, "call_run")["status"] == "failed"


async def test_a_bad_hook_entry_is_a_notice_and_the_others_still_run(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    user_config.write_text(
        '[[hooks.before_everything]]\ncommand = "true"\n'
        '[[hooks.pre_tool]]\ntool = "run_command"\n'
        f'[[hooks.pre_tool]]\ncommand = {toml_string(hook("deny"))}\nname = "guard"\n'
    )
    daemon = await spawn_daemon("--mode", "full-auto", script=write_script(tmp_path))
    session = await daemon.client.new_session(workspace)
    _, updates = await run(session, "run the tests")
    said = notices(updates)
    assert "hooks.before_everything in the user config is not a hook stage" in said
    assert "hooks.pre_tool[0] in the user config has no `command`" in said
    assert final(updates, "call_run")["status"] == "failed"  # the good hook denied it
