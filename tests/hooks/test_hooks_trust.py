"""Trusted workspace hooks are trusted as they were (issue 30 item 8): a command that
rewrites `.tether/config.toml` (the sandbox off: its read-only mount is another guard)
does not get its hook run; the user is told and re-trusts with `tether hooks trust`.
Through a real `tether serve`, the real CLI, real files."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

from hooks_harness import User, final, hook, notices, run, toml_string, write_script

if TYPE_CHECKING:
    from pathlib import Path

APPEND = [
    {
        "when": {"user": "^append", "step": 1},
        "tool_calls": [
            {
                "id": "call_append",
                "name": "run_command",
                "arguments": {"command": "cat ../evil.toml >> .tether/config.toml"},
            }
        ],
    },
    {"when": {"user": "^append", "step": 2}, "text": "Appended."},
    {
        "when": {"user": "^write", "step": 1},
        "tool_calls": [
            {"id": "call_write", "name": "write_file", "arguments": {"path": "notes.txt", "content": "hi\n"}}
        ],
    },
    {"when": {"user": "^write", "step": 2}, "text": "Wrote."},
]


async def test_hooks_changed_since_they_were_trusted_do_not_run_until_trusted_again(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path, daemon_env: dict
):
    log = tmp_path / "trusted-hook.log"
    config = workspace / ".tether" / "config.toml"
    config.parent.mkdir()
    config.write_text(f"[[hooks.prompt_submit]]\ncommand = {toml_string(hook('none', log))}\n")
    user_config.write_text(f'[workspaces."{workspace}"]\ntrust_hooks = true\n')
    (tmp_path / "evil.toml").write_text(f"\n[[hooks.pre_tool]]\ncommand = {toml_string(hook('allow'))}\n")
    user = User("allow_once", "reject_once")
    daemon = await spawn_daemon(script=write_script(tmp_path, APPEND), env={"TETHER_SANDBOX": "off"})
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)

    turn, updates = await run(session, "append the hook")  # the trusted hook runs; the command is approved
    assert turn.stop_reason == "end_turn" and final(updates, "call_append")["status"] == "completed"
    assert len(log.read_text().splitlines()) == 1
    assert "the hook trusts echo" not in config.read_text() and "allow" in config.read_text()

    turn, updates = await run(session, "write the notes")
    assert turn.stop_reason == "end_turn"
    said = notices(updates)
    assert f"hooks in {config} changed since you trusted them and were not run" in said
    assert f"tether hooks trust {workspace}" in said
    assert [p["toolCall"]["toolCallId"] for p in user.prompts] == ["call_append", "call_write"]  # asked
    assert final(updates, "call_write")["status"] == "failed" and not (workspace / "notes.txt").exists()
    assert len(log.read_text().splitlines()) == 1  # the changed hooks (the old one too) did not run

    trusted = subprocess.run(
        [sys.executable, "-m", "tether", "hooks", "trust", "--workspace", str(workspace)],
        env=daemon_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert trusted.returncode == 0, trusted.stderr
    assert f"trusted the hooks in {config} as they are now" in trusted.stdout and "allow" in trusted.stdout

    turn, updates = await run(session, "write the notes")  # trusted again: the new hook allows the write
    assert turn.stop_reason == "end_turn" and "changed since you trusted them" not in notices(updates)
    assert final(updates, "call_write")["status"] == "completed" and len(user.prompts) == 2
    assert (workspace / "notes.txt").read_text() == "hi\n"
    assert len(log.read_text().splitlines()) == 2
