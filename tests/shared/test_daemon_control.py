"""`tether daemon status|stop`: the user sees the shared daemon and stops it without hunting its pid."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def _tether(windows, *words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tether", *words],
        capture_output=True,
        text=True,
        env=windows.env,
        cwd=windows.workspace,
        timeout=60,
    )


async def test_status_shows_the_daemon_and_its_windows_then_stop_ends_it(windows):
    await windows.open()
    await windows.open()
    [pid] = windows.daemon_pids()

    status = _tether(windows, "daemon", "status")
    assert status.returncode == 0, status.stderr
    assert f"pid {pid}: listening, 2 window(s)" in status.stdout
    [sock] = windows.sockets()
    assert f"socket {sock}" in status.stdout and "shared-daemon-" in status.stdout
    [row] = [json.loads(line) for line in _tether(windows, "daemon", "status", "--json").stdout.splitlines()]
    assert (row["pid"], row["running"], row["listening"], row["windows"]) == (pid, True, True, 2)
    assert row["rss_mb"] > 5

    stopped = _tether(windows, "daemon", "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert stopped.stdout.strip() == f"stopped the shared daemon {pid}"
    assert windows.daemon_pids() == [] and windows.sockets() == []
    assert "no shared daemon is running" in _tether(windows, "daemon", "status").stdout
    assert _tether(windows, "daemon", "stop").stdout.strip() == "no shared daemon is running"

    # the next window starts a fresh daemon
    await windows.open()
    assert len(windows.daemon_pids()) == 1 and windows.daemon_pids() != [pid]


async def test_stop_never_signals_a_process_a_stale_pid_file_names(windows, tmp_path: Path):
    """A crashed daemon's pid file may name a pid reused by another program: it is left alone."""
    await windows.open()
    [pid] = windows.daemon_pids()
    bystander = subprocess.Popen(["sleep", "60"])
    stale = windows.runtime / "daemon-0000000000000000.pid"
    try:
        stale.write_text(f"{bystander.pid}\n")
        status = _tether(windows, "daemon", "status")
        assert f"stale pid file of a daemon that is gone: {stale}" in status.stdout
        assert f"pid {bystander.pid}" not in status.stdout
        stopped = _tether(windows, "daemon", "stop")
        assert stopped.stdout.strip() == f"stopped the shared daemon {pid}"
        assert bystander.poll() is None, "the bystander was signalled"
    finally:
        stale.unlink(missing_ok=True)
        bystander.kill()
        bystander.wait()
