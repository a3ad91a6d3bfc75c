"""`tether sessions ...` as a user runs it, against history written by a real daemon."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tether_client import ClientError


def _sessions(*args: str, env: dict, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tether", "sessions", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        input=stdin,
    )


@pytest.fixture
async def history(spawn_daemon, workspace: Path):
    """Two sessions from real turns; the daemon stays up (the CLI must cope with a live one)."""
    daemon = await spawn_daemon()
    ids = []
    for prompt in ("What does the README say?", "just say hello"):
        session = await daemon.client.new_session(workspace)
        turn = session.prompt(prompt)
        await turn.wait()
        assert turn.stop_reason == "end_turn"
        ids.append(session.id)
    return daemon, ids


async def test_list_show_and_search(history, daemon_env, workspace: Path):
    daemon, (readme, hello) = history
    listed = _sessions("list", env=daemon_env, cwd=workspace)
    assert listed.returncode == 0, listed.stderr
    header, *rows = listed.stdout.splitlines()
    assert header.split() == ["ID", "UPDATED", "MSGS", "TITLE"]
    assert [row.split()[0] for row in rows] == [hello, readme]  # newest first
    assert rows[1].split()[3] == "4" and rows[1].endswith("What does the README say?")
    assert rows[0].split()[3] == "2" and rows[0].endswith("just say hello")

    shown = _sessions("show", readme, env=daemon_env, cwd=workspace)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0] == f"Session {readme}: What does the README say?"
    for expected in (
        "--- turn 1 (complete, end_turn) ---",
        "user: What does the README say?",
        "assistant (thinking): Read the README.",
        "assistant: Reading the README.",
        '  tool read_file {"path": "README.md"}',
        "    -> ok: 1 # Sample (3 lines)",
        "assistant: The README says hello.",
    ):
        assert expected in shown.stdout.splitlines(), shown.stdout

    found = _sessions("search", "readme", env=daemon_env, cwd=workspace)
    assert found.returncode == 0, found.stderr
    lines = found.stdout.splitlines()
    assert lines[0].startswith(f"{readme}  #") and "[[README]]" in found.stdout
    assert hello not in found.stdout
    limited = _sessions("search", "readme", "--limit", "1", env=daemon_env, cwd=workspace)
    assert len(limited.stdout.splitlines()) == 2
    assert _sessions("search", '"unbalanced', env=daemon_env, cwd=workspace).returncode == 1
    nothing = _sessions("search", "zzzyzzy", env=daemon_env, cwd=workspace)
    assert nothing.returncode == 1 and "no matches for 'zzzyzzy'" in nothing.stderr

    # the daemon was not disturbed: its session still takes turns
    session = await daemon.client.resume_session(readme, workspace)
    turn = session.prompt("hello")
    await turn.wait()
    assert turn.stop_reason == "end_turn"


async def test_dump_restore_and_load_in_a_daemon(history, daemon_env, workspace: Path, tmp_path: Path, spawn_daemon):
    _daemon, (readme, _hello) = history
    dumped = _sessions("dump", readme, env=daemon_env, cwd=workspace)
    assert dumped.returncode == 0, dumped.stderr
    snapshot = json.loads(dumped.stdout)
    assert snapshot["tether_snapshot"] == 1 and snapshot["session"]["id"] == readme
    assert len(snapshot["messages"]) == 4

    out = tmp_path / "snap.json"
    assert _sessions("dump", readme, "-o", str(out), env=daemon_env, cwd=workspace).returncode == 0
    assert json.loads(out.read_text())["messages"] == snapshot["messages"]

    # restored from elsewhere: it goes back to the snapshot's workspace
    restored = _sessions("restore", str(out), env=daemon_env, cwd=tmp_path)
    assert restored.returncode == 0, restored.stderr
    new_id = restored.stdout.strip()
    assert new_id.startswith("sess_") and new_id != readme
    assert new_id in _sessions("list", env=daemon_env, cwd=workspace).stdout

    refused = _sessions("restore", str(out), "--keep-id", env=daemon_env, cwd=workspace)
    assert refused.returncode == 2
    assert f"session {readme!r} already exists in this workspace" in refused.stderr

    other = tmp_path / "other"
    other.mkdir()
    kept = _sessions("restore", "-", "--keep-id", "-w", str(other), env=daemon_env, cwd=workspace, stdin=dumped.stdout)
    assert kept.returncode == 0 and kept.stdout.strip() == readme
    daemon = await spawn_daemon()
    loaded = await daemon.client.load_session(readme, other)
    assert next(u["sessionUpdate"] for u in loaded.updates) == "user_message_chunk"
    listed = await daemon.client.list_sessions(other)
    assert [(s["sessionId"], s["cwd"]) for s in listed] == [(readme, str(other.resolve()))]


async def test_rules_are_imported_only_when_asked(history, daemon_env, workspace: Path, tmp_path: Path):
    _daemon, (readme, _hello) = history
    snapshot = json.loads(_sessions("dump", readme, env=daemon_env, cwd=workspace).stdout)
    snapshot["rules"] = [{"kind": "execute", "pattern": "npm test", "decision": "allow"}]
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(snapshot))
    target = tmp_path / "target"
    target.mkdir()

    plain = _sessions("restore", str(path), "-w", str(target), env=daemon_env, cwd=workspace)
    assert plain.returncode == 0 and "1 approval rule(s) were not imported" in plain.stderr
    again = _sessions("restore", str(path), "--import-rules", "-w", str(target), env=daemon_env, cwd=workspace)
    assert again.returncode == 0 and "not imported" not in again.stderr
    dumped = json.loads(
        _sessions("dump", again.stdout.strip(), "-w", str(target), env=daemon_env, cwd=workspace).stdout
    )
    assert dumped["rules"] == snapshot["rules"]


async def test_delete(history, daemon_env, workspace: Path):
    _daemon, (_readme, hello) = history
    deleted = _sessions("delete", hello, env=daemon_env, cwd=workspace)
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stdout.strip() == f"deleted {hello} (just say hello, 2 messages)"
    assert hello not in _sessions("list", env=daemon_env, cwd=workspace).stdout
    for action in ("delete", "show", "dump"):
        gone = _sessions(action, hello, env=daemon_env, cwd=workspace)
        assert gone.returncode == 1 and f"no session {hello!r}" in gone.stderr
    assert _sessions("search", "hello", env=daemon_env, cwd=workspace).stdout.count(hello) == 0


def test_bad_input(daemon_env, workspace: Path, tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = _sessions("restore", str(bad), env=daemon_env, cwd=workspace)
    assert result.returncode == 2 and "is not JSON" in result.stderr
    bad.write_text("\n")  # `tether sessions dump nope > bad.json` leaves it empty
    result = _sessions("restore", str(bad), env=daemon_env, cwd=workspace)
    assert result.returncode == 2 and "bad.json is empty" in result.stderr and "sessions dump" in result.stderr
    bad.write_text(json.dumps({"tether_snapshot": 9}))
    result = _sessions("restore", str(bad), env=daemon_env, cwd=workspace)
    assert result.returncode == 2
    assert "snapshot version 9 is not supported" in result.stderr and "reads versions 1" in result.stderr
    result = _sessions("restore", str(tmp_path / "missing.json"), env=daemon_env, cwd=workspace)
    assert result.returncode == 2 and "cannot read" in result.stderr
    assert _sessions("frobnicate", env=daemon_env, cwd=workspace).returncode == 2
    assert _sessions("show", env=daemon_env, cwd=workspace).returncode == 2
    assert _sessions("list", "-w", str(tmp_path / "nowhere"), env=daemon_env, cwd=workspace).returncode == 2

    # a workspace without history: nothing listed, nothing created
    empty = _sessions("list", env=daemon_env, cwd=workspace)
    assert empty.returncode == 0 and empty.stdout == "" and "no stored sessions" in empty.stderr
    assert _sessions("show", "sess_x", env=daemon_env, cwd=workspace).returncode == 1
    assert not (Path(daemon_env["TETHER_HOME"]) / "workspaces").exists()


# Bad input, another home and a snapshot's mode are three tests, not one: each runs many `tether
# sessions` commands, and apart they can run on both test workers.
def _elsewhere(daemon_env: dict[str, str], workspace: Path, tmp_path: Path) -> tuple[dict[str, str], Path, Any]:
    """The environment without TETHER_HOME, the home given by --home, a snapshot of one message."""
    env = {k: v for k, v in daemon_env.items() if k != "TETHER_HOME"}
    snapshot = {
        "tether_snapshot": 1,
        "session": {"id": "s", "workspace": str(workspace), "mode": "ask", "created_at": 1, "updated_at": 1},
        "turns": [],
        "reports": [],
        "messages": [
            {
                "seq": 0,
                "role": "user",
                "created_at": 1,
                "body": {"role": "user", "content": [{"type": "text", "text": "pelican"}]},
            }
        ],
    }
    return env, tmp_path / "elsewhere-home", snapshot


def test_home_instead_of_tether_home(daemon_env, workspace: Path, tmp_path: Path):
    env, home, snapshot = _elsewhere(daemon_env, workspace, tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(snapshot))
    restored = _sessions("restore", str(bad), "--keep-id", "--home", str(home), env=env, cwd=workspace)
    assert restored.returncode == 0 and restored.stdout.strip() == "s", restored.stderr
    found = _sessions("search", "pelican", "--home", str(home), env=env, cwd=workspace)
    assert found.returncode == 0 and "[[pelican]]" in found.stdout
    assert _sessions("list", env=daemon_env, cwd=workspace).stdout == ""

    # a lone surrogate (a JavaScript tool's broken pair) is read as U+FFFD
    bad.write_text(json.dumps({**snapshot, "session": {**snapshot["session"], "title": "half \ud800 pair"}}))
    odd = _sessions("restore", str(bad), "--home", str(home), env=env, cwd=workspace)
    assert odd.returncode == 0, odd.stderr
    dumped = _sessions("dump", odd.stdout.strip(), "--home", str(home), env=env, cwd=workspace)
    assert json.loads(dumped.stdout)["session"]["title"] == "half \ufffd pair"


def test_a_snapshots_mode_is_known_and_no_looser_than_a_new_sessions(daemon_env, workspace: Path, tmp_path: Path):
    """A known mode, and no looser than a new session's here (default ask)."""
    env, home, snapshot = _elsewhere(daemon_env, workspace, tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**snapshot, "session": {**snapshot["session"], "mode": "yolo"}}))
    refused = _sessions("restore", str(bad), "--home", str(home), env=env, cwd=workspace)
    assert (
        refused.returncode == 2
        and "session.mode must be one of read-only, ask, auto-edit, full-auto, not 'yolo'" in refused.stderr
    )
    bad.write_text(json.dumps({**snapshot, "session": {**snapshot["session"], "mode": "full-auto"}}))
    lowered = _sessions("restore", str(bad), "--home", str(home), env=env, cwd=workspace)
    assert lowered.returncode == 0 and "restored in 'ask'" in lowered.stderr
    dumped = _sessions("dump", lowered.stdout.strip(), "--home", str(home), env=env, cwd=workspace)
    assert json.loads(dumped.stdout)["session"]["mode"] == "ask"
    kept = _sessions("restore", str(bad), "--home", str(home), env={**env, "TETHER_MODE": "full-auto"}, cwd=workspace)
    assert kept.returncode == 0 and kept.stderr == ""
    dumped = _sessions("dump", kept.stdout.strip(), "--home", str(home), env=env, cwd=workspace)
    assert json.loads(dumped.stdout)["session"]["mode"] == "full-auto"


@pytest.mark.parametrize("action", ["list", "dump", "show", "search"])
async def test_a_reader_that_went_away_ends_the_command_quietly(history, daemon_env, workspace: Path, action: str):
    """`tether sessions dump ID | true`: no traceback, the exit status of a command
    stopped by SIGPIPE. (The reader is gone before the command writes: it takes far
    longer to start than the pipe takes to close.)"""
    _daemon, (readme, _hello) = history
    args = {"list": [], "dump": [readme], "show": [readme], "search": ["readme"]}[action]
    with subprocess.Popen(
        [sys.executable, "-m", "tether", "sessions", action, *args],
        env=daemon_env,
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        assert proc.wait(timeout=60) == 141
        assert proc.stderr.read() == b""


async def test_a_live_session_deleted_from_the_shell_says_so_at_its_next_prompt(history, daemon_env, workspace: Path):
    daemon, (readme, _hello) = history
    session = await daemon.client.resume_session(readme, workspace)
    deleted = _sessions("delete", readme, env=daemon_env, cwd=workspace)
    assert deleted.returncode == 0, deleted.stderr
    with pytest.raises(ClientError) as caught:
        await session.prompt("hello").wait()
    assert caught.value.code == -32002
    assert f"session {readme!r} was deleted from the workspace's history outside this daemon" in caught.value.message
    with pytest.raises(ClientError) as again:  # no longer live: the usual unknown-session error
        await session.prompt("hello").wait()
    assert again.value.code == -32002 and "unknown session" in again.value.message
    fresh = await daemon.client.new_session(workspace)  # the daemon itself is fine
    turn = fresh.prompt("hello")
    await turn.wait()
    assert turn.stop_reason == "end_turn"
