"""Crash safety, many times: SIGKILL the daemon at random moments of streaming turns
with tool calls, then check the database. Figures go to bench/RESULTS.md.

    .venv/bin/python bench/crash.py [--iterations 50] [--seed 1]

For each iteration: start `tether serve` (scripted provider, tool calls, delays), start a
turn, sleep a random 0-0.8 s, read the committed messages (a read-only connection), kill
-9, run `PRAGMA integrity_check`, start a new daemon (which recovers), and check that
every message committed before the kill is still there and every turn is complete or
interrupted. Prints a JSON summary.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench")]
from spawned import Spawned
from tether_side import init_params, new_params, prompt_params

SCRIPT = {
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
            "tool_calls": [{"name": "grep", "arguments": {"pattern": "bench"}}],
        },
        {"text": "All done. " * 20, "delay_ms": 5},
    ]
}


def committed(db: Path) -> set[tuple[Any, ...]]:
    if not db.exists():
        return set()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return set(conn.execute("SELECT session_id, seq, role, body FROM messages").fetchall())
    except sqlite3.OperationalError:
        return set()
    finally:
        conn.close()


def count(db: Path, results: dict[str, int], before: set[tuple[Any, ...]]) -> None:
    after = committed(db)
    results["lost_messages"] += len(before - after)
    conn = sqlite3.connect(db)
    statuses = [s for (s,) in conn.execute("SELECT status FROM turns")]
    conn.close()
    results["bad_turn_status"] += sum(s not in ("complete", "interrupted") for s in statuses)
    results["interrupted_turns"] = statuses.count("interrupted")


async def kill_once(
    argv: list[str], env: dict[str, str], ws: Path, home: Path, pause: float, results: dict[str, int]
) -> None:
    c = await Spawned.start(argv, env=env, cwd=ws)
    await c.request("initialize", init_params(ws))
    sid = (await c.request("session/new", new_params(ws)))["sessionId"]
    _id, answer = c.rpc.request_future("session/prompt", prompt_params(sid, "go"))
    await asyncio.sleep(pause)
    db = next(iter(home.rglob("history.sqlite3")))
    before = committed(db)
    os.kill(c.proc.pid, signal.SIGKILL)
    await c.close()
    with contextlib.suppress(ConnectionError):
        await answer  # never answered: the daemon is gone
    results["kill_points"] += 1
    results["messages_committed_before_kills"] += len(before)
    conn = sqlite3.connect(db)
    results["integrity_ok"] += conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()
    recover = await Spawned.start(argv, env=env, cwd=ws)
    await recover.request("initialize", init_params(ws))
    await recover.request("session/list", {"cwd": str(ws)})
    await recover.close()
    count(db, results, before)


async def run(iterations: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    scratch = Path(tempfile.mkdtemp(prefix="tether-crash-"))
    ws = scratch / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("bench\n")
    script = scratch / "script.json"
    script.write_text(json.dumps(SCRIPT))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env["TETHER_HOME"] = str(scratch / "home")
    env["TETHER_PROBE_PORTS"] = ""
    argv = [sys.executable, "-m", "tether", "serve", "--provider", "scripted", "--script", str(script)]
    results = {
        "kill_points": 0,
        "integrity_ok": 0,
        "lost_messages": 0,
        "bad_turn_status": 0,
        "messages_committed_before_kills": 0,
        "interrupted_turns": 0,
    }
    started = time.perf_counter()
    for _ in range(iterations):
        await kill_once(argv, env, ws, scratch / "home", rng.uniform(0.0, 0.8), results)
    out: dict[str, Any] = dict(results)
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.iterations, args.seed)), indent=2))


if __name__ == "__main__":
    main()
