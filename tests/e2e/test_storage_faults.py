"""A history that cannot be read or written answers -32015 with what SQLite or the OS said,
the path and what to do (SPEC §6), never -32603; `tether sessions` prints it and exits 1.

Every fault is real, and real for root (the tests run as root: chmod stops nothing): a
file where a directory must be, a file that is not SQLite, a truncated database, a
read-only bind mount and a tiny tmpfs (each mounted in the daemon's own mount namespace,
`unshare -m`), filled through `/proc/PID/root` while the daemon runs.
"""

from __future__ import annotations

import asyncio
import errno
import os
import shlex
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from daemon_harness import BASIC_SCRIPT, EXAMPLES, serve_command
from tether.store.paths import database_path
from tether_client import ClientError

STORAGE_FAILED = -32015


async def fails(daemon, method: str, params: dict) -> ClientError:
    with pytest.raises(ClientError) as caught:
        await daemon.client.request(method, params)
    return caught.value


def prompt(session_id: str, text: str = "hi") -> dict:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


def sessions_list(home: Path, workspace: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tether", "sessions", "list", "-w", str(workspace), "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def in_own_mounts(setup: str, script: Path = BASIC_SCRIPT) -> list[str]:
    """`tether serve` in a mount namespace of its own, after ``setup`` (shell) ran there."""
    serve = shlex.join(serve_command(script=script))
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", f"{setup} && exec {serve}"]


async def stored_session(spawn_daemon, workspace: Path) -> str:
    """A session with one finished turn, written by a daemon that then stopped cleanly."""
    daemon = await spawn_daemon()
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("Where is main?")
    await turn.wait()
    await daemon.client.close()
    return session.id


async def test_a_home_that_is_a_file_names_the_directory(spawn_daemon, workspace: Path, tmp_path: Path):
    home = tmp_path / "home-file"
    home.write_text("not a directory\n")
    for env_home in (home, home / "tether"):  # the home, or a folder it needs, is a file
        daemon = await spawn_daemon(env={"TETHER_HOME": str(env_home)})
        for method, params in (
            ("session/new", {"cwd": str(workspace), "mcpServers": []}),
            ("session/list", {"cwd": str(workspace)}),
            ("session/load", {"sessionId": "sess_x", "cwd": str(workspace), "mcpServers": []}),
        ):
            error = await fails(daemon, method, params)
            assert error.code == STORAGE_FAILED, (method, error.message)
            assert error.message.startswith(f"history directory not writable: {home} (")
            assert "TETHER_HOME" in error.message
        assert "Traceback" not in daemon.stderr()
    listed = sessions_list(home, workspace)
    assert listed.returncode == 1
    assert listed.stderr.startswith(f"tether sessions: history directory not writable: {home} (")
    assert "Traceback" not in listed.stderr


async def test_a_file_that_is_not_sqlite(spawn_daemon, workspace: Path, tether_home: Path):
    db = database_path(workspace, tether_home)
    db.write_bytes(b"these are my notes, not a database\n" * 200)
    daemon = await spawn_daemon()
    for method, params in (
        ("session/new", {"cwd": str(workspace), "mcpServers": []}),
        ("session/list", {"cwd": str(workspace)}),
        ("session/load", {"sessionId": "sess_x", "cwd": str(workspace), "mcpServers": []}),
        ("session/resume", {"sessionId": "sess_x", "cwd": str(workspace)}),
    ):
        error = await fails(daemon, method, params)
        assert error.code == STORAGE_FAILED, (method, error.message)
        assert error.message.startswith(f"file is not a database: {db} (")
        assert error.data == {"path": str(db)}
    listed = sessions_list(tether_home, workspace)
    assert (listed.returncode, listed.stdout) == (1, "")
    assert listed.stderr.startswith(f"tether sessions: file is not a database: {db} (")
    assert "Traceback" not in listed.stderr + daemon.stderr()
    assert db.read_bytes().startswith(b"these are my notes")  # left as it was


async def test_a_truncated_database(spawn_daemon, workspace: Path, tether_home: Path):
    session_id = await stored_session(spawn_daemon, workspace)
    db = database_path(workspace, tether_home)
    assert not Path(f"{db}-wal").exists()  # all of it in the file: the cut loses pages
    with open(db, "r+b") as handle:
        handle.truncate(os.path.getsize(db) // 2)
    daemon = await spawn_daemon()
    for method, params in (
        ("session/list", {"cwd": str(workspace)}),
        ("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []}),
        ("session/new", {"cwd": str(workspace), "mcpServers": []}),
    ):
        error = await fails(daemon, method, params)
        assert error.code == STORAGE_FAILED, (method, error.message)
        assert error.message.startswith(f"database disk image is malformed: {db} (")
        assert "truncated" in error.message
    listed = sessions_list(tether_home, workspace)
    assert listed.returncode == 1
    assert listed.stderr.startswith(f"tether sessions: database disk image is malformed: {db} (")


def read_only(path: Path) -> str:
    """Shell: ``path`` (a file or a folder) read-only, by a read-only bind mount on itself."""
    quoted = shlex.quote(str(path))
    return f"mount --bind {quoted} {quoted} && mount -o remount,bind,ro {quoted}"


@pytest.mark.parametrize("what", ["database", "folder"])
async def test_a_read_only_history(spawn_daemon, workspace: Path, tether_home: Path, what: str):
    session_id = await stored_session(spawn_daemon, workspace)
    db = database_path(workspace, tether_home)
    new = ("session/new", {"cwd": str(workspace), "mcpServers": []})
    if what == "database":
        # SQLite opens it read-only: what is stored can be listed and loaded, writes fail
        daemon = await spawn_daemon(command=in_own_mounts(read_only(db)))
        expected = f"attempt to write a readonly database: {db} (make the file and its folder writable)"
        error = await fails(daemon, *new)
        assert (error.code, error.message) == (STORAGE_FAILED, expected)
        assert [s["sessionId"] for s in await daemon.client.list_sessions(workspace)] == [session_id]
        loaded = await daemon.client.load_session(session_id, workspace)
        assert loaded.updates[0]["content"]["text"] == "Where is main?"
        error = await fails(daemon, "session/prompt", prompt(session_id))
        assert error.code == STORAGE_FAILED and error.message.startswith(expected)
    else:  # nowhere to put the write-ahead log: it cannot even be opened
        daemon = await spawn_daemon(command=in_own_mounts(read_only(tether_home)))
        expected = (
            f"unable to open database file: {db} (its folder {db.parent} is read-only (SQLite writes "
            f"its journal beside it); make it writable)"
        )
        for method, params in (
            new,
            ("session/list", {"cwd": str(workspace)}),
            ("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []}),
        ):
            error = await fails(daemon, method, params)
            assert (error.code, error.message) == (STORAGE_FAILED, expected), method
    assert "Traceback" not in daemon.stderr()


def fill(root: Path) -> Path:
    """Fill the file system at ``root`` (seen from the test through /proc/PID/root)."""
    filler = root / "filler"
    # unbuffered: a write the full disk took only part of leaves nothing for close to flush
    # (buffered, whether one did depended on how the free space divided into writes)
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


class Approver:
    """Answers the first permission request only once ``go`` is set."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.go = asyncio.Event()

    async def on_request(self, method: str, params: dict):
        self.asked.set()
        await self.go.wait()
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}


async def test_a_full_disk_mid_turn_ends_the_turn_with_the_error_and_keeps_what_was_stored(
    spawn_daemon, workspace: Path, tether_home: Path
):
    home = shlex.quote(str(tether_home))
    daemon = await spawn_daemon(
        command=in_own_mounts(f"mount -t tmpfs -o size=2m tmpfs {home}", script=EXAMPLES / "approvals.json")
    )
    user = Approver()
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("edit the readme")
    turn.start()
    await asyncio.wait_for(user.asked.wait(), 15)  # the step so far is committed (checkpoint)

    mounted = Path(f"/proc/{daemon.pid}/root") / str(tether_home).lstrip("/")
    filler = fill(mounted)
    user.go.set()  # the approved call's start, or its result, is the next write
    with pytest.raises(ClientError) as caught:
        await asyncio.wait_for(turn.wait(), 15)
    error = caught.value
    db = database_path(workspace, tether_home)
    assert error.code == STORAGE_FAILED
    assert error.message.startswith(f"database or disk is full: {db} (free some disk space")
    assert "the turn stopped there" in error.message and "what was stored before is kept" in error.message
    assert error.data["path"] == str(db) and error.data["turnId"].startswith("turn_")
    assert (workspace / "README.md").read_text() == "# Sample\n\nHello from the sample workspace.\n"

    # starting anything new fails the same way; reading still works
    error = await fails(daemon, "session/new", {"cwd": str(workspace), "mcpServers": []})
    assert error.code == STORAGE_FAILED and error.message.startswith("database or disk is full: ")
    listed = await daemon.client.request("session/list", {"cwd": str(workspace)})
    assert [s["sessionId"] for s in listed["sessions"]] == [session.id]

    # nothing already stored was lost: the prompt, the read and its result, the step that
    # asked (with its call still pending)
    filler.unlink()
    loaded = await daemon.client.load_session(session.id, workspace)
    shown = [(u["sessionUpdate"], u.get("toolCallId"), u.get("status")) for u in loaded.updates[:6]]
    assert shown[0] == ("user_message_chunk", None, None)
    assert ("tool_call", "call_read", "completed") in shown
    assert ("tool_call", "call_edit", "pending") in shown
    text = "".join(u["content"]["text"] for u in loaded.updates if u["sessionUpdate"] == "agent_message_chunk")
    assert text.startswith("Reading it first.Editing.")
    assert "Traceback" not in daemon.stderr().split("tool edit_file failed")[0]
    with closing(sqlite3.connect(mounted / db.relative_to(tether_home))) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


async def test_a_full_disk_before_anything_is_stored(spawn_daemon, workspace: Path, tether_home: Path):
    home = shlex.quote(str(tether_home))
    daemon = await spawn_daemon(command=in_own_mounts(f"mount -t tmpfs -o size=256k tmpfs {home}"))
    fill(Path(f"/proc/{daemon.pid}/root") / str(tether_home).lstrip("/"))
    error = await fails(daemon, "session/new", {"cwd": str(workspace), "mcpServers": []})
    assert error.code == STORAGE_FAILED
    folder = database_path(workspace, tether_home).parent
    assert error.message.startswith(f"history directory not writable: {folder} (No space left on device")
    assert "free some disk space" in error.message


async def test_a_bad_list_cursor_is_invalid_params_naming_the_field(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon()
    await daemon.client.new_session(workspace)
    for cursor in ("not-a-cursor!", "", "W10", "é", "x" * 5000):
        error = await fails(daemon, "session/list", {"cwd": str(workspace), "cursor": cursor})
        assert error.code == -32602, (cursor, error.message)
        assert error.message.startswith("invalid params for session/list: params.cursor: ")
        assert "nextCursor" in error.message and len(error.message) < 400
    error = await fails(daemon, "session/list", {"cwd": str(workspace), "cursor": 7})
    assert error.code == -32602 and "params.cursor" in error.message
    assert "internal error" not in daemon.stderr()


async def test_a_database_deleted_while_the_daemon_runs_is_a_fault_not_a_silent_loss(
    spawn_daemon, workspace: Path, tether_home: Path
):
    daemon = await spawn_daemon()
    session = await daemon.client.new_session(workspace)
    path = database_path(workspace, tether_home)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    # SQLite would go on writing into the deleted file, and every later session would be lost
    error = await fails(daemon, "session/new", {"cwd": str(workspace), "mcpServers": []})
    assert error.code == STORAGE_FAILED
    assert f"the history database was deleted or replaced while Tether was running: {path}" in error.message
    error = await fails(daemon, "session/prompt", prompt(session.id))
    assert error.code == STORAGE_FAILED
