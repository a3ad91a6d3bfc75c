"""ACP v2's replay beside v1's (issue 32, item 4; figures go to bench/RESULTS.md, "ACP v2 replay").

    .venv/bin/python bench/replay_v2.py [--messages 40000] [--rounds 5] [--base /work/main]

One stored session of generated turns (a question, a read, its result, an answer: the rows
bench/bighistory.py writes, ending with a compaction summary), then, alternating for
``--rounds`` rounds, each in a fresh `tether serve` past its start-up: v1's `session/load`
and v2's `session/resume` with `replayFrom: {type: "start"}` of it. Per request: request ->
first replayed update, request -> answer, the daemon's CPU time for it, the updates sent,
the daemon's peak RSS; each
figure is the median of its rounds (the samples are printed too). With ``--base``, v1's
`session/load` and v2's `session/resume` of that tree too, in the same rounds (neither path is
slower than before).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "daemon"), str(ROOT / "protocol")]
from bighistory import Words, add_session, daemon, timed  # noqa: E402
from spawned import Spawned, peak_rss_mb  # noqa: E402
from tether_side import tether_env  # noqa: E402

SID = "sess_replay"


async def make_history(home: Path, ws: Path, messages: int) -> None:
    from tether.store import HistoryStore, database_path

    path = database_path(ws, home)
    await (await HistoryStore.open(path)).close()  # the schema, as the daemon makes it
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("BEGIN")
        add_session(db, Words(), SID, ws, messages // 4, 40, compact_at_end=True)
        db.execute("COMMIT")


async def one(python: str, env: dict[str, str], ws: Path, version: int, tree: Path = ROOT) -> dict[str, Any]:
    c: Spawned = await daemon(python, tree, env, ws)
    if version == 2:  # a v2 connection of its own: `initialize` once per connection
        await c.close()
        c = await _v2_daemon(python, env, ws, tree)
        method, params = "session/resume", {"sessionId": SID, "cwd": str(ws), "replayFrom": {"type": "start"}}
    else:
        method, params = "session/load", {"sessionId": SID, "cwd": str(ws), "mcpServers": []}
    cpu0, t0 = _cpu_ms(c.proc.pid), time.perf_counter()
    _answer, answer_ms = await timed(c, method, params)
    cpu_ms = _cpu_ms(c.proc.pid) - cpu0
    updates = [t for t, name, _p in c.queued() if name == "session/update"]
    out = {"answer_ms": answer_ms, "first_update_ms": round((updates[0] - t0) * 1000, 1) if updates else None,
           "daemon_cpu_ms": cpu_ms, "updates": len(updates), "peak_rss_mb": round(peak_rss_mb(c.proc.pid), 1)}
    await c.close()
    return out


def _cpu_ms(pid: int) -> float:
    """The daemon's CPU time so far (user + system, /proc): on a loaded machine the request's
    share of it varies far less than its wall time."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


async def _v2_daemon(python: str, env: dict[str, str], ws: Path, tree: Path = ROOT) -> Spawned:
    script = ws.parent / "ok.json"
    argv = [python, "-m", "tether", "serve", "--provider", "scripted", "--script", str(script)]
    c = await Spawned.start(argv, env={**env, "PYTHONPATH": os.pathsep.join(str(tree / p) for p in ("daemon", "protocol"))}, cwd=ws)
    answer = await c.request("initialize", {"protocolVersion": 2, "info": {"name": "bench", "version": "1"},
                                            "capabilities": {}, "rootUri": ws.as_uri()})
    assert answer["protocolVersion"] == 2, answer
    await c.request("session/list", {"cwd": str(ws)})  # the history open, as `daemon` does
    await asyncio.sleep(1.5)
    c.queued()
    return c


async def run(messages: int, rounds: int, base: Path | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        home, ws = Path(tmp) / "home", Path(tmp) / "ws"
        ws.mkdir()
        env = tether_env(dict(os.environ), home)
        await make_history(home, ws, messages)
        samples: dict[str, list[dict[str, Any]]] = {
            "v1": [], "v2": [], **({"v1_base": [], "v2_base": []} if base else {})}
        for _ in range(rounds):
            if base is not None:
                for version in (1, 2):
                    samples[f"v{version}_base"].append(await one(sys.executable, env, ws, version, base))
            for version in (1, 2):
                samples[f"v{version}"].append(await one(sys.executable, env, ws, version))
        print(json.dumps(samples), file=sys.stderr)
        return {name: {k: statistics.median(s[k] for s in runs) for k in runs[0]} for name, runs in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=40_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--base", type=Path, help="another tree whose v1 session/load is measured in the same rounds")
    args = parser.parse_args()
    figures = asyncio.run(run(args.messages, args.rounds, args.base))
    print(json.dumps({"messages": args.messages + 1, **figures}, indent=1))


if __name__ == "__main__":
    main()
