"""Two editor windows on one shared daemon: each `tether acp --shared` is a thin proxy to it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from daemon_harness import BASIC_SCRIPT, text_of, until
from tether.store.paths import database_path


async def test_two_windows_are_served_by_one_daemon_with_one_history_writer(windows, workspace: Path):
    first = await windows.open(script=BASIC_SCRIPT)
    second = await windows.open(script=BASIC_SCRIPT)
    assert len(windows.daemon_pids()) == 1  # the second window started no daemon
    a = await first.new_session(workspace)
    b = await second.new_session(workspace)
    turn_a, turn_b = a.prompt("Where is main?"), b.prompt("Where is main?")
    await turn_a.wait()
    await turn_b.wait()
    assert turn_a.stop_reason == turn_b.stop_reason == "end_turn"
    # each window sees its own session's updates only
    assert turn_a.updates and turn_b.updates
    assert text_of(turn_a.updates) == text_of(turn_b.updates) != ""
    listed = {s["sessionId"] for s in await first.list_sessions(workspace)}
    assert {a.id, b.id} <= listed  # one store: either window lists both
    # one process has the workspace's history open: the daemon, not the windows
    db = str(database_path(workspace, Path(windows.env["TETHER_HOME"])))
    holders = [pid for pid in _pids_holding(db)]
    assert holders == windows.daemon_pids()
    # the proxies are the windows' processes; none of them runs the daemon's code
    for client in (first, second):
        assert client.process.pid not in holders


async def test_the_socket_is_private_to_the_user(windows):
    await windows.open()
    [sock] = windows.sockets()
    assert stat.S_ISSOCK(sock.stat().st_mode)
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
    assert sock.stat().st_uid == os.getuid()


def _pids_holding(path: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fds = os.listdir(f"/proc/{name}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{name}/fd/{fd}") == path:
                    found.append(int(name))
                    break
            except OSError:
                continue
    return found


__all__ = ["text_of", "until"]


async def test_shared_is_turned_on_by_the_user_config_and_never_by_a_workspace_config(
    shared_env: dict[str, str], workspace: Path, tmp_path: Path
):
    import sys

    from tether_client import TetherClient

    (workspace / ".tether").mkdir()
    (workspace / ".tether" / "config.toml").write_text("shared = true\n")
    runtime = Path(shared_env["XDG_RUNTIME_DIR"]) / "tether"
    command = [sys.executable, "-m", "tether", "acp", "--provider", "scripted", "--script", str(BASIC_SCRIPT)]
    async with await TetherClient.spawn(command=command, env=shared_env, cwd=workspace, framing="ndjson") as alone:
        answer = await alone.initialize()
        refused = {item["key"] for item in answer["_meta"]["tether"]["configRefused"]}
        assert "shared" in refused  # and said so to the editor
        await alone.new_session(workspace)
        assert not list(runtime.glob("*.sock")) if runtime.exists() else True
    user_config = tmp_path / "user.toml"
    user_config.write_text("shared = true\nshared_idle_timeout = 1\n")
    env = {**shared_env, "TETHER_CONFIG": str(user_config)}
    async with await TetherClient.spawn(command=command, env=env, cwd=workspace, framing="ndjson") as window:
        await window.initialize()
        assert len(list(runtime.glob("*.sock"))) == 1  # the user's own config turned it on
    await until(lambda: not list(runtime.glob("*.sock")), timeout=20)  # and it idles out
