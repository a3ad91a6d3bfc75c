"""`tether chat` whose output is not a terminal behaves like `tether run`: one turn, printed."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

from chat_harness import SCRIPT

if TYPE_CHECKING:
    from pathlib import Path


def _chat(daemon_env: dict[str, str], workspace: Path, *args: str, stdin: str | None = None):
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tether",
            "chat",
            "--provider",
            "scripted",
            "--script",
            str(SCRIPT),
            "--workspace",
            str(workspace),
            *args,
        ],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=daemon_env,
        timeout=60,
    )


def test_piped_output_is_one_turn_like_tether_run(daemon_env, chat_workspace: Path):
    done = _chat(daemon_env, chat_workspace, "explain this")
    assert done.returncode == 0, done.stderr
    assert "def add(a, b):" in done.stdout and "[end_turn" in done.stdout
    assert "\x1b[" not in done.stdout


def test_the_message_may_come_on_stdin_and_json_works(daemon_env, chat_workspace: Path):
    done = _chat(daemon_env, chat_workspace, "--json", stdin="hello\n")
    assert done.returncode == 0, done.stderr
    assert '"event": "turn_end"' in done.stdout and "Hello from the scripted chat." in done.stdout


def test_no_message_and_no_terminal_is_a_clear_error(daemon_env, chat_workspace: Path):
    done = _chat(daemon_env, chat_workspace)
    assert done.returncode == 2
    assert 'give the message: tether chat "..."' in done.stderr
