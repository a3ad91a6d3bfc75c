"""The shared daemon's life: started once by windows racing, refused to other users, idle
exit, replaced after a crash (with the turn it left waiting resumed)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path

import pytest
from test_one_session_two_windows import Person

from daemon_harness import until

# a client of another local user: connects, says what a proxy says, reads what comes back
_OTHER_USER = r"""
import socket, sys
sock = socket.socket(socket.AF_UNIX)
try:
    sock.connect(sys.argv[1])
except PermissionError:
    print("no access"); sys.exit(0)
sock.settimeout(10)
data = b""
try:
    sock.sendall(b'TETHER-SHARED/1 2f746d70 ndjson\n'
                 b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n')
    while chunk := sock.recv(65536):
        data += chunk
except OSError:
    pass
print("answered" if data else "closed")
"""


async def test_windows_starting_together_start_one_daemon(windows):
    opened = await asyncio.gather(*(windows.open() for _ in range(4)))
    assert all(client.init_result for client in opened)
    assert len(windows.daemon_pids()) == 1
    assert len(windows.sockets()) == 1


def _as_nobody(sock: Path) -> str:
    done = subprocess.run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "/usr/bin/python3",
            "-c",
            _OTHER_USER,
            str(sock),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.skipif(os.getuid() != 0 or not Path("/usr/bin/python3").exists(), reason="needs root to act as nobody")
async def test_another_user_cannot_reach_the_daemon_even_through_a_loosened_socket(windows):
    await windows.open()
    [sock] = windows.sockets()
    assert _as_nobody(sock) == "no access"  # the 0700 directory and the 0600 socket
    # a user who loosened both still gets nothing: the daemon checks the peer's uid
    for path, mode in ((sock.parent.parent, 0o711), (sock.parent, 0o711), (sock, 0o666)):
        os.chmod(path, mode)
    try:
        assert _as_nobody(sock) == "closed"
    finally:
        for path in (sock.parent.parent, sock.parent):
            os.chmod(path, 0o700)
        os.chmod(sock, 0o600)
    assert "refused a connection from uid 65534" in windows.log()
    again = await windows.open()  # and the daemon goes on serving its user
    assert again.init_result


async def test_the_daemon_exits_when_idle_and_the_next_window_starts_a_new_one(windows, workspace: Path):
    windows.env["TETHER_SHARED_IDLE_TIMEOUT"] = "1"
    window = await windows.open()
    [pid] = windows.daemon_pids()
    session = await window.new_session(workspace)
    await window.close()
    await until(lambda: not windows.daemon_pids() and not windows.sockets(), timeout=20)
    again = await windows.open()
    assert windows.daemon_pids() != [pid]
    assert again.init_result and session.id


def _refused(path: Path) -> bool:
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except ConnectionRefusedError:
            return True
    return False


async def test_a_crashed_daemon_is_replaced_and_its_waiting_turn_resumed(windows, workspace: Path):
    nobody = Person()
    window = await windows.open(on_request=nobody.on_request)
    [pid] = windows.daemon_pids()
    session = await window.new_session(workspace)
    turn = session.prompt("edit the readme")
    turn.start()
    await until(lambda: len(nobody.asked) == 1)
    os.kill(pid, signal.SIGKILL)  # a crash: the socket file stays, nobody listens on it
    await until(lambda: pid not in windows.daemon_pids())
    assert len(windows.sockets()) == 1
    # its other threads still hold the socket for a moment after the main thread is gone
    await until(lambda: _refused(windows.sockets()[0]))
    yes = Person("allow_once")
    later = await windows.open(on_request=yes.on_request)
    [new_pid] = windows.daemon_pids()
    assert new_pid != pid
    loaded = await later.load_session(session.id, workspace)  # asked again, and resumed on "allow"
    await until(
        lambda: any(u.get("_meta", {}).get("tether", {}).get("turnEnded") for u in loaded.updates[len(loaded.replay) :])
    )
    assert [p["toolCall"]["toolCallId"] for p in yes.asked] == ["call_edit"]
    assert "Hello, edited by Tether." in (workspace / "README.md").read_text()
