"""A daemon that serves many sessions over days keeps nothing of those it closed (issue 31):
a real `tether serve` over stdio, its own counters (`_tether/daemon/stats`) read between."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


async def _stats(daemon) -> dict:
    return await daemon.client.request("_tether/daemon/stats")


async def _until(daemon, wanted, timeout: float = 15.0) -> dict:
    """The daemon's stats once ``wanted(stats)`` holds (the watches start and end in the background)."""
    async with asyncio.timeout(timeout):
        while not wanted(stats := await _stats(daemon)):
            await asyncio.sleep(0.05)
    return stats


async def _watched(daemon, count: int) -> None:
    await _until(daemon, lambda stats: stats["watchedWorkspaces"] == count)


async def test_stats_report_tasks_threads_fds_watches_and_stores(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon()
    before = await _stats(daemon)
    assert before["watchedWorkspaces"] == 0 and before["openStores"] == 0
    assert before["tasks"] >= 1 and before["threads"] >= 1 and before["openFds"] >= 3
    session = await daemon.client.new_session(workspace)
    await session.prompt("What does the README say?").wait()
    await _watched(daemon, 1)
    after = await _stats(daemon)
    assert after["openStores"] == 1 and after["openFds"] > before["openFds"]  # the history database is open


async def test_closed_sessions_leave_no_watch_task_or_fd_behind(spawn_daemon, tmp_path: Path):
    daemon = await spawn_daemon()
    workspaces = []
    for n in range(3):
        ws = tmp_path / f"project{n}"
        ws.mkdir()
        (ws / "README.md").write_text(f"Project {n}.\n")
        workspaces.append(ws)
    # one round first: what every later round must come back to (stores stay open, by design)
    first = [await daemon.client.new_session(ws) for ws in workspaces]
    for session in first:
        await session.prompt("What does the README say?").wait()
    await _watched(daemon, 3)
    for session in first:
        await session.close()
    await _watched(daemon, 0)
    settled = await _stats(daemon)

    for _round in range(3):
        sessions = [await daemon.client.new_session(ws) for ws in workspaces for _ in range(2)]
        for session in sessions:
            assert (await session.prompt("What does the README say?").wait())["stopReason"] == "end_turn"
        await _watched(daemon, 3)
        for session in sessions[::2]:  # one of each workspace's two: its watch stays
            await session.close()
        assert (await _stats(daemon))["watchedWorkspaces"] == 3
        for session in sessions[1::2]:
            await session.close()
        await _watched(daemon, 0)

    now = await _until(daemon, lambda s: s["tasks"] <= settled["tasks"] and s["openFds"] <= settled["openFds"])
    assert now["liveSessions"] == 0 and now["openStores"] == 3 and now["backgroundTasks"] == 0

    # a closed session loaded again is watched again
    loaded = await daemon.client.load_session(first[0].id, workspaces[0])
    await loaded.prompt("What does the README say?").wait()
    await _watched(daemon, 1)
