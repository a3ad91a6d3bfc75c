"""`tether run` and `tether demo` as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

from daemon_harness import BASIC_SCRIPT

if TYPE_CHECKING:
    from pathlib import Path


def _tether(*args: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tether", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_run_prints_the_streamed_answer_and_tool_calls(daemon_env, workspace: Path):
    done = _tether(
        "run",
        "What does the README say?",
        "--provider",
        "scripted",
        "--script",
        str(BASIC_SCRIPT),
        env=daemon_env,
        cwd=workspace,
    )
    assert done.returncode == 0, done.stderr
    assert "Reading the README." in done.stdout
    assert "Read README.md" in done.stdout
    assert "Hello from the sample workspace." in done.stdout
    assert "The README says hello." in done.stdout
    assert "[end_turn" in done.stdout


def test_run_json_prints_one_event_per_line_and_exit_code_follows_stop_reason(daemon_env, workspace: Path):
    done = _tether(
        "run",
        "loop please",
        "--json",
        "--max-steps",
        "1",
        "--provider",
        "scripted",
        "--script",
        str(BASIC_SCRIPT),
        env=daemon_env,
        cwd=workspace,
    )
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["event"] == "session"
    assert events[-1]["event"] == "turn_end" and events[-1]["stopReason"] == "max_turn_requests"
    assert {e["update"]["sessionUpdate"] for e in events if e["event"] == "update"} >= {
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
    }
    assert done.returncode == 3


def test_run_without_a_provider_explains_how_to_configure_one(daemon_env, workspace: Path):
    done = _tether("run", "hello", env=daemon_env, cwd=workspace)
    assert done.returncode == 2
    assert "TETHER_PROVIDER" in done.stderr


def test_provider_failure_exits_1_with_the_reason(daemon_env, workspace: Path):
    done = _tether(
        "run",
        "fail now",
        "--provider",
        "scripted",
        "--script",
        str(BASIC_SCRIPT),
        env=daemon_env,
        cwd=workspace,
    )
    assert done.returncode == 1 and "503" in done.stderr


def test_demo_runs_with_no_api_key(daemon_env, tmp_path: Path):
    done = _tether("demo", env=daemon_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Read README.md" in done.stdout and "Search 'def main'" in done.stdout
    assert "src/greeter/__main__.py:6:def main() -> int:" in done.stdout
    assert "It starts in `src/greeter/__main__.py`" in done.stdout


def test_doctor_shows_settings_their_sources_and_the_provider_choice(daemon_env, workspace: Path):
    env = {**daemon_env, "OPENAI_API_KEY": "sk-doctor-SECRET", "TETHER_MAX_STEPS": "7"}
    done = _tether("doctor", "--model", "gpt-test", env=env, cwd=workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "max_steps" in done.stdout and "env TETHER_MAX_STEPS" in done.stdout
    assert "flag --model" in done.stdout
    assert "openai · model gpt-test" in done.stdout and "OPENAI_API_KEY is set" in done.stdout
    assert "SECRET" not in done.stdout
    assert "history:" in done.stdout


def test_doctor_without_any_provider_exits_1_and_says_how_to_configure(daemon_env, workspace: Path):
    done = _tether("doctor", env=daemon_env, cwd=workspace)
    assert done.returncode == 1
    assert "none: no model provider is configured" in done.stdout


def test_doctor_json_gives_editors_the_same_facts_as_data(daemon_env, workspace: Path):
    env = {**daemon_env, "OPENAI_API_KEY": "sk-doctor-SECRET"}
    done = _tether("doctor", "--json", "--model", "gpt-test", env=env, cwd=workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["version"] and report["workspace"] == str(workspace.resolve())
    assert report["provider"]["ok"] is True and report["provider"]["name"] == "openai"
    assert report["provider"]["model"] == "gpt-test" and report["provider"]["keySet"] is True
    assert report["settings"]["model"] == {"value": "gpt-test", "source": "flag --model"}
    assert report["history"].endswith("history.sqlite3")
    assert "SECRET" not in done.stdout

    missing = _tether("doctor", "--json", env=daemon_env, cwd=workspace)
    assert missing.returncode == 1
    assert json.loads(missing.stdout)["provider"]["error"].startswith("no model provider is configured")


def _run_on_a_terminal(args: list[str], answer: str, env: dict, cwd: Path) -> tuple[int, str]:
    """`tether run` with a terminal on stdin (where it asks), answering its one question."""
    import os
    import pty
    import select
    import time

    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "tether", "run", *args],
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
    )
    os.close(terminal)
    said = b""
    deadline = time.monotonic() + 30
    while b"never > " not in said and time.monotonic() < deadline:  # input()'s prompt is on stdout
        ready, _, _ = select.select([process.stderr, process.stdout], [], [], 0.2)
        for stream in ready:
            said += os.read(stream.fileno(), 4096)
    os.write(controller, answer.encode() + b"\n")
    out, err = process.communicate(timeout=30)
    os.close(controller)
    return process.returncode, said.decode() + err.decode() + out.decode()


def test_run_asks_on_the_terminal_and_can_grant_the_network_once(daemon_env, workspace: Path, tmp_path: Path):
    import socket

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    connect = (
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); print('connected')\""
    )
    script = tmp_path / "connect.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1},
                        "tool_calls": [{"id": "c", "name": "run_command", "arguments": {"command": connect}}],
                    },
                    {"text": "done"},
                ]
            }
        )
    )
    args = ["connect", "--provider", "scripted", "--script", str(script)]
    try:
        code, text = _run_on_a_terminal(args, "w", daemon_env, workspace)
        assert code == 0, text
        assert "[w] once, with network" in text and "\n   | connected" in text, text
        code, text = _run_on_a_terminal(args, "y", daemon_env, workspace)  # once, without network
        assert "\n   | connected" not in text and "sock.connect(sa)" in text, text
    finally:
        listener.close()


def test_run_whose_reader_goes_away_exits_141_quietly(daemon_env, workspace: Path):
    """`tether run ... | head -1`: the reader closes the pipe; run stops as one killed by SIGPIPE."""
    for extra in ([], ["--json"]):
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tether",
                "run",
                "What does the README say?",
                *extra,
                "--provider",
                "scripted",
                "--script",
                str(BASIC_SCRIPT),
            ],
            env=daemon_env,
            cwd=workspace,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdout is not None
        process.stdout.close()  # the reader is gone before the first line
        err = process.communicate(timeout=60)[1].decode()
        assert process.returncode == 141, err
        assert "Traceback" not in err and "BrokenPipe" not in err


def test_run_whose_edit_was_rejected_without_a_terminal_exits_5(daemon_env, workspace: Path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tether",
            "run",
            "edit the readme",
            "--provider",
            "scripted",
            "--script",
            str(BASIC_SCRIPT.with_name("approvals.json")),
        ],
        env=daemon_env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 5, done.stderr
    assert "rejected: no terminal to ask on" in done.stderr
    assert "tether run: 1 approval rejected, so what it asked was not done (exit code 5)" in done.stderr
    assert (workspace / "README.md").read_text() == "# Sample\n\nHello from the sample workspace.\n"
    assert "[end_turn" in done.stdout  # the turn itself ended; the exit code tells a script it fell short


def test_help_names_every_provider_and_the_exit_codes(daemon_env, workspace: Path):
    from tether.config.settings import PROVIDERS

    for command in ("run", "serve", "doctor"):
        shown = " ".join(_tether(command, "--help", env=daemon_env, cwd=workspace).stdout.split())
        assert f"--provider PROVIDER {' | '.join(PROVIDERS)}" in shown, shown
        assert "later releases" not in shown
    run_help = _tether("run", "--help", env=daemon_env, cwd=workspace).stdout
    assert "\n  5    the turn ended, but an approval was rejected" in run_help
    assert "\n  141  the reader of stdout went away" in run_help


def test_the_daemons_help_wraps_to_the_terminals_width(daemon_env, workspace: Path):
    """`tether acp` asks the terminal's width only when it prints help (not for each flag it
    declares), and still wraps to it: narrow and wide terminals, and the usage error's line."""
    for columns in (60, 200):
        env = {**daemon_env, "COLUMNS": str(columns)}
        for args in (("acp", "--help"), ("serve", "--help")):
            lines = _tether(*args, env=env, cwd=workspace).stdout.splitlines()
            assert max(map(len, lines)) <= columns - 2, (columns, args, lines)
            assert (max(map(len, lines)) > 100) == (columns == 200), (columns, args, lines)
    wrong = _tether("acp", "--no-such-flag", env={**daemon_env, "COLUMNS": "60"}, cwd=workspace)
    assert wrong.returncode == 2
    assert wrong.stderr.splitlines()[-1] == "tether: error: unrecognized arguments: --no-such-flag"
