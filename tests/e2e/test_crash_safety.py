"""Killing the daemon (SIGKILL) at random moments of streaming turns with tool calls
loses nothing that was committed, and leaves a database that opens cleanly."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

KILL_POINTS = 6  # per test run; bench/crash.py runs many more


def _committed(db: Path) -> list[tuple]:
    if not db.exists():
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute("SELECT session_id, seq, role, body FROM messages ORDER BY session_id, seq").fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()


async def test_sigkill_at_random_moments_keeps_every_committed_message(
    spawn_daemon, workspace: Path, tmp_path: Path, tether_home: Path
):
    rng = random.Random(20261122)
    script = tmp_path / "busy.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1},
                        "text": "Looking around. " * 10,
                        "delay_ms": 5,
                        "tool_calls": [
                            {"name": "list_dir", "arguments": {}},
                            {"name": "read_file", "arguments": {"path": "README.md"}},
                        ],
                    },
                    {
                        "when": {"step": 2},
                        "text": "Searching. " * 10,
                        "delay_ms": 5,
                        "tool_calls": [{"name": "grep", "arguments": {"pattern": "Hello"}}],
                    },
                    {"text": "All done. " * 20, "delay_ms": 5},
                ]
            }
        )
    )
    tried = 0
    for point in range(KILL_POINTS):
        daemon = await spawn_daemon(script=script)
        session = await daemon.client.new_session(workspace)
        turn = session.prompt(f"turn {point}")
        turn.start()
        await asyncio.sleep(rng.uniform(0.0, 0.6))
        db = next(iter(tether_home.rglob("history.sqlite3")), None)
        before = _committed(db) if db else []
        os.kill(daemon.pid, signal.SIGKILL)
        await daemon.client.process.wait()
        tried += 1

        db = next(iter(tether_home.rglob("history.sqlite3")))
        conn = sqlite3.connect(db)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        conn.close()
        # a new daemon recovers the database; nothing committed before the kill is missing
        recovering = await spawn_daemon(script=script)
        await recovering.client.list_sessions(workspace)
        after = _committed(db)
        assert set(before) <= set(after), f"kill point {point}: committed messages lost"
        conn = sqlite3.connect(db)
        statuses = {s for (s,) in conn.execute("SELECT status FROM turns")}
        conn.close()
        assert statuses <= {"complete", "interrupted"}, statuses
        await recovering.client.close()
    assert tried == KILL_POINTS
