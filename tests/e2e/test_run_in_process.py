"""`tether run` serves its daemon in its own process: what a user sees of that one process.

The daemon's guarantees hold as they do for `tether serve`: commands cannot reach the
provider keys by any route nor write into the client's output, the process is hardened
(no core files), Ctrl-C cancels the turn cleanly, and the turn lands in the workspace's
history.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import test_sandboxed_commands as sandboxed  # its keys and its every-route snoop

FAKE_KEYS, SNOOP = sandboxed.FAKE_KEYS, sandboxed.SNOOP


def _script(tmp_path: Path, command: str) -> Path:
    script = tmp_path / "command.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1},
                        "tool_calls": [{"id": "cmd", "name": "run_command", "arguments": {"command": command}}],
                    },
                    {"text": "done"},
                ]
            }
        )
    )
    return script


def _run(*args: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tether", "run", *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]  # every line: one JSON event


def _tool_text(events: list[dict]) -> str:
    updates = [e["update"] for e in events if e["event"] == "update"]
    done = [u for u in updates if u.get("toolCallId") == "cmd" and u.get("status") in ("completed", "failed")][-1]
    return "".join(b.get("content", {}).get("text", "") for b in done.get("content") or [])


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
def test_a_command_in_tether_run_sees_the_provider_keys_by_no_route(
    daemon_env, workspace: Path, tmp_path: Path, backend: str
):
    env = {**daemon_env, **FAKE_KEYS, "TETHER_SANDBOX": backend}
    done = _run(
        "look around",
        "--json",
        "--mode",
        "full-auto",
        "--provider",
        "scripted",
        "--script",
        str(_script(tmp_path, SNOOP)),
        env=env,
        cwd=workspace,
    )
    assert done.returncode == 0, done.stderr
    events = _events(done.stdout)
    output = _tool_text(events)
    assert "---end" in output and "PATH=" in output, output
    for name, value in FAKE_KEYS.items():
        assert value not in done.stdout and value not in done.stderr, f"{name} leaked to a command under {backend}"
    assert events[-1]["event"] == "turn_end" and events[-1]["stopReason"] == "end_turn"


def test_a_command_cannot_write_into_tether_runs_output(daemon_env, workspace: Path, tmp_path: Path):
    # every descriptor the command holds, and the terminal: none is the client's stdout
    command = (
        "for f in /proc/self/fd/*; do echo CORRUPT > $f; done 2>/dev/null;"
        " echo CORRUPT > /dev/tty 2>/dev/null; echo CORRUPT >&2; echo finished"
    )
    done = _run(
        "write everywhere",
        "--json",
        "--mode",
        "full-auto",
        "--provider",
        "scripted",
        "--script",
        str(_script(tmp_path, command)),
        env=daemon_env,
        cwd=workspace,
    )
    assert done.returncode == 0, done.stderr
    events = _events(done.stdout)  # fails on a stray line
    assert "finished" in _tool_text(events)
    assert events[-1]["stopReason"] == "end_turn"
    assert "CORRUPT" not in done.stderr


def test_ctrl_c_mid_turn_cancels_it_and_exits_130(daemon_env, workspace: Path, tmp_path: Path):
    script = _script(tmp_path, "sleep 30")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tether",
            "run",
            "wait",
            "--json",
            "--mode",
            "full-auto",
            "--provider",
            "scripted",
            "--script",
            str(script),
        ],
        env=daemon_env,
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    seen: list[dict] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # until the command runs
        event = json.loads(process.stdout.readline())
        seen.append(event)
        update = event.get("update", {})
        if update.get("toolCallId") == "cmd" and update.get("status") == "in_progress":
            break
    # the one process is hardened as the daemon is: no core file could hold a key
    limits = Path(f"/proc/{process.pid}/limits").read_text()
    assert [line.split()[4:6] for line in limits.splitlines() if line.startswith("Max core file size")] == [["0", "0"]]
    os.kill(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=30)
    events = seen + _events(out)
    assert process.returncode == 130, err
    assert events[-1]["event"] == "turn_end" and events[-1]["stopReason"] == "cancelled"
    assert "Traceback" not in err


def test_the_turn_lands_in_the_workspaces_history(daemon_env, workspace: Path, tmp_path: Path):
    script = tmp_path / "reply.json"
    script.write_text(json.dumps({"replies": [{"text": "remembered answer"}]}))
    done = _run(
        "remember this", "--json", "--provider", "scripted", "--script", str(script), env=daemon_env, cwd=workspace
    )
    assert done.returncode == 0, done.stderr
    session_id = _events(done.stdout)[0]["sessionId"]
    shown = subprocess.run(
        [sys.executable, "-m", "tether", "sessions", "show", session_id],
        env=daemon_env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert "user: remember this" in shown.stdout and "assistant: remembered answer" in shown.stdout


def test_invalid_settings_are_reported_once_without_a_traceback(daemon_env, workspace: Path):
    done = _run("hi", "--provider", "nope", env=daemon_env, cwd=workspace)
    assert done.returncode == 2
    assert "provider = 'nope' (from flag --provider) is not valid" in done.stderr
    assert "Traceback" not in done.stderr
