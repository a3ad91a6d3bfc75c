"""FIFOs a command plants where Tether itself reads before the next command (a hostile
model in full-auto, or a project's allowed `npm test`): `.gitmodules`, read to find the
submodules' git dirs bubblewrap protects while the next command's sandbox is set up.
An `open` of a FIFO without a writer never returns, and the set-up runs on the daemon's
event loop: the daemon stopped answering anything, every session of it. Through a real
`tether serve` under bubblewrap: the next command runs, and the daemon answers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize("planted", [".gitmodules"])
async def test_a_planted_fifo_does_not_stop_the_next_command(
    spawn_daemon, workspace: Path, tmp_path: Path, planted: str
) -> None:
    script = tmp_path / "fifo.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1},
                        "tool_calls": [
                            {
                                "id": "plant",
                                "name": "run_command",
                                "arguments": {"command": f"mkfifo {planted} && echo PLANTED"},
                            }
                        ],
                    },
                    {
                        "when": {"step": 2},
                        "tool_calls": [
                            {"id": "next", "name": "run_command", "arguments": {"command": "echo NEXT-RAN"}}
                        ],
                    },
                    {"text": "done"},
                ]
            }
        )
    )
    daemon = await spawn_daemon("--mode", "full-auto", script=script, env={"TETHER_SANDBOX": "bwrap"})
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("plant, then run the next command")
    try:
        async with asyncio.timeout(30):
            updates = json.dumps([u async for u in turn])
    finally:
        if (workspace / planted).exists() and not (workspace / planted).is_file():
            # the bug: the daemon stuck in open(); a writer releases it so the test ends
            with contextlib.suppress(OSError):
                os.close(os.open(workspace / planted, os.O_WRONLY | os.O_NONBLOCK))
    assert turn.stop_reason == "end_turn" and "PLANTED" in updates and "NEXT-RAN" in updates, updates[-1500:]
