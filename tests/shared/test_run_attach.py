"""`tether run --attach`: the one-shot turn runs in the shared daemon, where a window sees it."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TYPE_CHECKING

from daemon_harness import BASIC_SCRIPT, text_of, until

if TYPE_CHECKING:
    from pathlib import Path


async def test_a_turn_run_with_attach_is_seen_live_by_a_window_that_loads_its_session(windows, workspace: Path):
    window = await windows.open(script=BASIC_SCRIPT)
    [pid] = windows.daemon_pids()
    run = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tether",
        "run",
        "--attach",
        "--json",
        "--provider",
        "scripted",
        "--script",
        str(BASIC_SCRIPT),
        "answer slowly please",
        cwd=workspace,
        env=windows.env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert run.stdout is not None
    first = json.loads(await asyncio.wait_for(run.stdout.readline(), 20))
    assert first["event"] == "session"
    session_id = first["sessionId"]
    assert windows.daemon_pids() == [pid]  # the run joined the window's daemon
    watching = await window.load_session(session_id, workspace)
    out, err = await asyncio.wait_for(run.communicate(), 30)
    assert run.returncode == 0, err.decode()
    events = [json.loads(line) for line in out.decode().splitlines()]
    said = text_of([e["update"] for e in events if e["event"] == "update"])
    assert said == "This answer streams slowly so that it can be cancelled part way through."
    # the window saw the rest of the turn's text arrive while it ran, after its replay
    await until(lambda: text_of(watching.updates[len(watching.replay) :]).endswith("part way through."))
    live = text_of(watching.updates[len(watching.replay) :])
    assert said.endswith(live)
