"""What a session or a connection owns in the shared daemon goes with it (issue 32 item 2):
a closed session's open approval is asked of no window that loads it later, and the LSP
front's sessions are one connection's, not the next one's. Real shared daemon."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

from test_lsp_front_window import _lsp_editor, _shown

from daemon_harness import until


def _windows_seen(windows) -> int:
    """The windows the daemon serves, as `tether daemon status --json` shows them."""
    done = subprocess.run(
        [sys.executable, "-m", "tether", "daemon", "status", "--json"],
        capture_output=True,
        text=True,
        env=windows.env,
        cwd=windows.workspace,
        timeout=60,
    )
    [row] = [json.loads(line) for line in done.stdout.splitlines()]
    return int(row["windows"])


class Asked:
    """A window's user who never answers; keeps what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def on_request(self, method: str, params: dict):
        assert method == "session/request_permission", method
        self.asked.append(params["toolCall"]["toolCallId"])
        await asyncio.Event().wait()


async def test_a_closed_sessions_open_approval_is_asked_of_no_window_that_comes_later(windows, workspace: Path):
    first, later = Asked(), Asked()
    window = await windows.open(on_request=first.on_request)
    other = await windows.open(on_request=later.on_request)
    session = await window.new_session(workspace)
    turn = session.prompt("edit the readme")
    turn.start()
    await until(lambda: first.asked == ["call_edit"])
    await session.close()  # its only window: the turn stops, its approval is withdrawn
    await turn.wait()
    assert turn.stop_reason == "cancelled"
    loaded = await other.load_session(session.id, workspace)  # live again, for another window
    fresh = await other.new_session(workspace)  # and a session with another id
    await asyncio.sleep(0.3)
    assert later.asked == [], later.asked
    assert loaded.id == session.id and fresh.id != session.id
    # a new turn of the loaded session asks again, this window only (the first closed the session)
    again = loaded.prompt("edit the readme")
    again.start()
    await until(lambda: later.asked == ["call_edit"])
    assert first.asked == ["call_edit"]
    await loaded.cancel()
    await again.wait()


async def test_an_approval_open_when_its_window_goes_is_asked_of_no_window_that_comes_later(windows, workspace: Path):
    first, later = Asked(), Asked()
    window = await windows.open(on_request=first.on_request)
    session = await window.new_session(workspace)
    session.prompt("edit the readme").start()
    await until(lambda: first.asked == ["call_edit"])
    other = await windows.open(on_request=later.on_request)
    await window.close()  # its only window goes: the turn is cancelled, its approval closed
    await until(lambda: _windows_seen(windows) == 1)  # the daemon saw it go
    loaded = await other.load_session(session.id, workspace)
    await asyncio.sleep(0.3)
    assert later.asked == [], later.asked
    assert not any(
        u.get("toolCallId") == "call_edit" and u.get("status") == "pending"
        for u in loaded.updates[len(loaded.replay) :]
    ), loaded.updates
    assert len(windows.daemon_pids()) == 1


async def test_the_lsp_fronts_sessions_are_one_connections_and_end_with_it(windows, workspace: Path):
    ask = {"command": "tether.ask", "arguments": ["What does this do?"]}
    editor = await _lsp_editor(windows, workspace)
    mine = await editor.request("workspace/executeCommand", ask)
    await until(lambda: len(_shown(editor)) == 1)
    assert (await editor.request("workspace/executeCommand", ask))["sessionId"] == mine["sessionId"]  # kept
    await until(lambda: len(_shown(editor)) == 2)
    neighbour = await _lsp_editor(windows, workspace)  # another connection, same workspace, same daemon
    theirs = await neighbour.request("workspace/executeCommand", ask)
    assert theirs["sessionId"] != mine["sessionId"]
    await editor.close()
    await until(lambda: len(_shown(neighbour)) == 1)
    successor = await _lsp_editor(windows, workspace)  # the closed connection's front is not inherited
    after = await successor.request("workspace/executeCommand", ask)
    assert after["sessionId"] not in (mine["sessionId"], theirs["sessionId"])
    assert len(windows.daemon_pids()) == 1


def _inotify_fds(pid: int) -> int:
    """The inotify instances a process holds (a workspace's watch is one)."""
    found = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):  # closed meanwhile
            found += os.readlink(fd) == "anon_inode:inotify"
    return found


async def test_the_sessions_a_window_alone_had_open_end_with_it(windows, workspace: Path, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    leaving, staying = await windows.open(), await windows.open()
    [pid] = windows.daemon_pids()
    before = _inotify_fds(pid)
    left = await leaving.new_session(workspace)
    kept = await staying.new_session(elsewhere)
    await until(lambda: _inotify_fds(pid) == before + 2)  # each workspace watched
    await leaving.close()
    await until(lambda: _inotify_fds(pid) == before + 1)  # the one nobody has open any more: not
    turn = kept.prompt("hi")  # the other window's session goes on
    await turn.wait()
    assert turn.stop_reason == "end_turn"
    loaded = await staying.load_session(left.id, workspace)  # live again, from its history
    assert loaded.id == left.id
    await until(lambda: _inotify_fds(pid) == before + 2)
