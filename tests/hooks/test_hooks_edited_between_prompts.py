"""A session keeps its turns' setup (hidden paths, hooks as configured) between prompts and builds it
again when an input changed (services/turn_setup.py): an edit to the user or workspace config between
two prompts of one session applies to the next prompt, even one that keeps the file's size and mtime.
Through a real `tether serve`, real files, the hooks as real commands."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from hooks_harness import hook, run, toml_string, write_script

if TYPE_CHECKING:
    from pathlib import Path

_OLD = 1_700_000_000  # an mtime long past: the session keeps what it read from the file


def _write_aged(path: Path, text: str) -> None:
    """Write ``text`` and set the mtime back to `_OLD` (only the ctime tells the change)."""
    path.write_text(text)
    os.utime(path, (_OLD, _OLD))


def _lines(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def _prompt_hook(log: Path) -> str:
    return f"[[hooks.prompt_submit]]\ncommand = {toml_string(hook('none', log))}\n"


async def test_a_hook_edited_removed_or_added_between_two_prompts_applies_to_the_next_prompt(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    first, second = tmp_path / "hook-a.log", tmp_path / "hook-b.log"
    _write_aged(user_config, _prompt_hook(first))
    daemon = await spawn_daemon(script=write_script(tmp_path), env={"TETHER_SANDBOX": "off"})  # logs outside
    session = await daemon.client.new_session(workspace)

    turn, _ = await run(session, "hello")
    assert turn.stop_reason == "end_turn" and (_lines(first), _lines(second)) == (1, 0)
    turn, _ = await run(session, "hello")  # nothing changed: the same hook runs
    assert turn.stop_reason == "end_turn" and (_lines(first), _lines(second)) == (2, 0)

    time.sleep(1.1)  # past the grain since the file's ctime: the session keeps what it read
    turn, _ = await run(session, "hello")
    assert turn.stop_reason == "end_turn" and (_lines(first), _lines(second)) == (3, 0)
    before = user_config.stat()
    _write_aged(user_config, _prompt_hook(second))  # same size, same mtime: another hook
    assert (before.st_size, before.st_mtime_ns) == (user_config.stat().st_size, user_config.stat().st_mtime_ns)
    turn, _ = await run(session, "hello")
    assert turn.stop_reason == "end_turn" and (_lines(first), _lines(second)) == (3, 1)

    user_config.unlink()  # no user config: no hooks
    turn, _ = await run(session, "hello")
    assert turn.stop_reason == "end_turn" and (_lines(first), _lines(second)) == (3, 1)

    _write_aged(user_config, _prompt_hook(first))  # added back
    turn, _ = await run(session, "hello")
    assert turn.stop_reason == "end_turn" and (_lines(first), _lines(second)) == (4, 1)


async def test_trust_taken_back_between_two_prompts_stops_the_workspace_hooks_at_the_next_prompt(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    log = tmp_path / "workspace-hook.log"
    config = workspace / ".tether" / "config.toml"
    config.parent.mkdir()
    _write_aged(config, _prompt_hook(log))
    trusted = f'[workspaces."{workspace}"]\ntrust_hooks = true\n'
    _write_aged(user_config, trusted)
    daemon = await spawn_daemon(script=write_script(tmp_path), env={"TETHER_SANDBOX": "off"})
    session = await daemon.client.new_session(workspace)

    turn, _ = await run(session, "hello")
    assert turn.stop_reason == "end_turn" and _lines(log) == 1

    _write_aged(user_config, trusted.replace(" = true", " =false"))  # same size: not trusted any more
    turn, _ = await run(session, "hello")
    assert turn.stop_reason == "end_turn" and _lines(log) == 1  # the workspace's hook did not run


async def test_hooks_a_workspace_adds_between_two_prompts_are_refused_at_the_next_prompt(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path
):
    log = tmp_path / "planted-hook.log"
    _write_aged(user_config, "")
    daemon = await spawn_daemon(script=write_script(tmp_path), env={"TETHER_SANDBOX": "off"})
    session = await daemon.client.new_session(workspace)
    turn, _ = await run(session, "hello")
    assert turn.stop_reason == "end_turn"

    config = workspace / ".tether" / "config.toml"
    config.parent.mkdir()
    _write_aged(config, _prompt_hook(log))
    turn, updates = await run(session, "hello")
    said = "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")
    assert turn.stop_reason == "end_turn" and _lines(log) == 0
    assert f"hooks in {config} were not run: a workspace may not add hooks" in said
