"""One task group owns the daemon's background tasks: started with a reference, waited
for at shutdown (cancelled after a grace period), never started once the daemon stops."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import anyio
import pytest
from server_harness import running

from tether.server.tasks import BackgroundTasks

if TYPE_CHECKING:
    from pathlib import Path

    from tether.config import Settings

ACP_INIT = {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}}}


async def test_warm_up_watchers_and_checkpoints_run_in_the_daemons_task_group(settings: Settings, workspace: Path):
    async with running(settings, workspace) as daemon:
        tasks = daemon.server.daemon.tasks
        answer = await daemon.call("initialize", ACP_INIT)
        assert answer["protocolVersion"] == 1
        assert tasks.started["warm-up"] == 1
        await anyio.sleep(0.05)
        # nothing of the turn is built before the first session is open and answered
        assert daemon.server.daemon.lazy_provider.built is None and daemon.server.daemon._tools is None

        await daemon.new_session(workspace)
        with anyio.fail_after(10):
            while "warm-up" in tasks.running_names:
                await anyio.sleep(0.01)
        # then the provider and the tools are built by the warm-up, before any prompt
        assert daemon.server.daemon.lazy_provider.built is not None and daemon.server.daemon._tools is not None
        watcher = f"watcher {workspace}"
        assert tasks.running_names == {watcher: 1}
        with anyio.fail_after(10):  # (written again until the watch is set up)
            for n in range(1_000_000):
                if daemon.server.daemon.registry.watchers[workspace].reloads:
                    break
                (workspace / ".gitignore").write_text(f"ignored-{n}/\n")
                await anyio.sleep(0.1)

        store = await daemon.server.daemon.registry.store_for(workspace)
        # a write that leaves more than 4 MiB in the WAL is followed by a checkpoint
        await store.create_session("sess_big", str(workspace), "ask", metadata={"blob": "x" * (5 << 20)})
        assert tasks.started["wal checkpoint"] == 1
    assert tasks.count == 0  # the watcher was stopped and waited for
    assert tasks.start("late", anyio.sleep, 0) is False and tasks.started["late"] == 0


async def test_shutdown_waits_for_tasks_then_cancels_what_still_runs():
    tasks = BackgroundTasks()
    events: list[str] = []

    async def short() -> None:
        await anyio.sleep(0.05)
        events.append("short finished")

    async def endless() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            events.append("endless cancelled")

    assert tasks.start("short", short)  # before the group is open: started when it opens
    async with tasks.running(grace=0.3):
        tasks.start("endless", endless)
        assert tasks.running_names == {"short": 1, "endless": 1}
    assert events == ["short finished", "endless cancelled"] and tasks.count == 0


async def test_a_failing_task_is_logged_and_the_others_run_on(caplog):
    tasks = BackgroundTasks()
    finished = anyio.Event()

    async def broken() -> None:
        raise RuntimeError("boom")

    async def fine() -> None:
        await anyio.sleep(0.02)
        finished.set()

    with caplog.at_level(logging.ERROR, logger="tether.server"):
        async with tasks.running(grace=1.0):
            tasks.start("broken", broken)
            tasks.start("fine", fine)
            with anyio.fail_after(5):
                await finished.wait()
    assert "background task broken failed" in caplog.text
    assert tasks.count == 0


async def test_an_error_of_the_daemon_is_raised_as_it_is_after_its_tasks_stop():
    tasks = BackgroundTasks()
    stopped: list[str] = []

    async def endless() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            stopped.append("endless")

    with pytest.raises(OSError, match="stdin went away"):
        async with tasks.running(grace=0.05):
            tasks.start("endless", endless)
            await anyio.sleep(0)
            raise OSError("stdin went away")
    assert stopped == ["endless"]
