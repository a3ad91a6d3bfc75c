"""`tether run` started as a user starts it, for the start-up caches' tests
(test_class_code_cache.py, test_module_cache.py): one turn, what it said, and a turn whose
model runs a command."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def run_turn(
    env: dict[str, str], cwd: Path, script: Path, prompt: str = "hi", *flags: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tether",
            "run",
            prompt,
            "--json",
            *flags,
            "--provider",
            "scripted",
            "--script",
            str(script),
        ],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def said(done: subprocess.CompletedProcess[str]) -> str:
    """The turn's text; it must have ended as `end_turn`."""
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["event"] == "turn_end" and events[-1]["stopReason"] == "end_turn"
    chunks = [e["update"] for e in events if e["event"] == "update"]
    return "".join(u["content"]["text"] for u in chunks if u.get("sessionUpdate") == "agent_message_chunk")


def command_script(tmp_path: Path, command: str) -> Path:
    """A script whose model runs ``command`` (`run_command`), then says "planted"."""
    script = tmp_path / "plant.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1},
                        "tool_calls": [{"id": "plant", "name": "run_command", "arguments": {"command": command}}],
                    },
                    {"when": {"step": 2}, "text": "planted"},
                ]
            }
        )
    )
    return script


LOOSENED = ["file writable by others", "file writable by its group", "folder writable by others"]


def loosen(cache: Path, how: str) -> None:
    """Make ``cache`` (or its folder) writable by someone else, as ``how`` says (`LOOSENED`)."""
    if how == "file writable by others":
        cache.chmod(0o602)
    elif how == "file writable by its group":
        cache.chmod(0o620)
    else:
        cache.parent.chmod(0o757)
