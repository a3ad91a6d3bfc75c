"""What the live ACP v2 stream costs: the renderer and frame per update, and a real daemon's turn.

    .venv/bin/python bench/v2_stream.py [--rounds 7] [--updates 20000] [--turns 5]
    PYTHONPATH=<old tree>/daemon:<old tree>/protocol .venv/bin/python bench/v2_stream.py   (before)

1. In this process: `SessionUpdates` (the emitter with the connection's renderer) over a
   connection that keeps the frames, for a v2 and a v1 connection: `--updates` text chunks
   (one per flush: the hot path), tool call upserts (start, in progress, done with text
   content and a location), terminal output chunks and `state_update`s. CPU (process time)
   per update, the median of `--rounds` rounds.
2. A real daemon (`tether serve`, scripted provider) on a v2 connection: a 20,000-delta turn
   and a turn of 100 `read_file` calls, sent -> `state_update` idle; the daemon's CPU for
   the turn and the notifications it wrote, the median of `--turns` (a daemon each).
Nothing is asserted; tests do not time things.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path[:0] = [str(BENCH.parent / "tests"), str(BENCH.parent / "tests" / "server")]
from server_harness import RecordingConnection
from spawned import Spawned

from tether.agent import sink
from tether.rendering.emitter import SessionUpdates
from tether.tools.base import ToolLocation


def _chunks(updates: SessionUpdates, n: int) -> None:
    for i in range(n):
        updates.text(f"abcd{i % 10}")
        updates.drain()


def _calls(updates: SessionUpdates, n: int) -> None:
    where = (ToolLocation("/w/README.md", 1),)
    for i in range(n):
        call = f"call_{i}"
        updates.emit(sink.ToolCallStarted(call, "Read README.md", "read"))
        updates.emit(sink.ToolCallPatch(call, status="in_progress", raw_input={"path": "README.md"}))
        content = (sink.TextContent("bench\n" * 4),)
        updates.emit(sink.ToolCallPatch(call, status="completed", content=content, locations=where))


def _terminal(updates: SessionUpdates, n: int) -> None:
    for i in range(n):
        updates.emit(sink.TerminalOutput("call_t", "call_t", f"line {i} of the output\n"))


def _states(updates: SessionUpdates, n: int) -> None:
    for _ in range(n // 2):
        updates.emit(sink.TurnStateChanged("running"))
        updates.emit(sink.TurnStateChanged("idle", "end_turn"))


KINDS = {"chunk": (_chunks, 1), "tool_call": (_calls, 3), "terminal_output": (_terminal, 1), "state": (_states, 1)}


def in_process(version: int, updates: int, rounds: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, (drive, per) in KINDS.items():
        samples = []
        for _ in range(rounds + 1):  # the first: warm-up
            conn = RecordingConnection(version)
            emitter = SessionUpdates("sess_bench", conn)  # type: ignore[arg-type]
            emitter.emit(sink.PromptInserted("turn_1", ()))
            emitter.emit(sink.StepStarted("turn_1", 1))
            n = updates // per
            c0 = time.process_time()
            drive(emitter, n)
            samples.append((time.process_time() - c0) * 1e6 / (n * per))
        out[name + "_us"] = round(statistics.median(samples[1:]), 3)
    return out


def scripts(scratch: Path) -> dict[str, Path]:
    calls = [{"id": f"call_{i}", "name": "read_file", "arguments": {"path": "README.md"}} for i in range(100)]
    bodies = {
        "big": {"replies": [{"repeat": {"chunk": "abcd", "count": 20000}}]},
        "tools": {"replies": [{"when": {"step": 1}, "text": "Reading.", "tool_calls": calls}, {"text": "Read."}]},
    }
    paths = {}
    for name, body in bodies.items():
        paths[name] = scratch / f"{name}.json"
        paths[name].write_text(json.dumps(body))
    return paths


async def daemon_turn(script: Path, env: dict[str, str], ws: Path) -> dict[str, float]:
    argv = [sys.executable, "-m", "tether", "serve", "--provider", "scripted", "--script", str(script)]
    c = await Spawned.start(argv, env=env, cwd=ws)
    await c.request("initialize", {"protocolVersion": 2, "info": {"name": "bench", "version": "1"}, "capabilities": {}})
    sid = (await c.request("session/new", {"cwd": str(ws), "mcpServers": []}))["sessionId"]
    cpu0, t0 = c.cpu_s(), time.perf_counter()
    await c.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]})
    notes = 0
    while True:
        _t, method, params = await c.next_note()
        notes += method == "session/update"
        update = params.get("update", {}) if isinstance(params, dict) else {}
        if update.get("sessionUpdate") == "state_update" and update.get("state") == "idle":
            break
    wall, cpu = time.perf_counter() - t0, c.cpu_s() - cpu0
    await c.close()
    return {"turn_cpu_ms": cpu * 1000, "turn_wall_ms": wall * 1000, "notifications": notes}


async def daemon(turns: int) -> dict[str, Any]:
    scratch = Path(tempfile.mkdtemp(prefix="tether-bench-v2-"))
    ws = scratch / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("bench\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env["TETHER_HOME"] = str(scratch / "home")
    out: dict[str, Any] = {}
    for name, script in scripts(scratch).items():
        runs = [await daemon_turn(script, env, ws) for _ in range(turns)]
        out[name] = {key: round(statistics.median(r[key] for r in runs), 1) for key in runs[0]}
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--updates", type=int, default=20_000)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--no-daemon", action="store_true", help="the in-process part only")
    args = parser.parse_args()
    result: dict[str, Any] = {
        "in_process_v2": in_process(2, args.updates, args.rounds),
        "in_process_v1": in_process(1, args.updates, args.rounds),
    }
    if not args.no_daemon:
        result["daemon_v2"] = asyncio.run(daemon(args.turns))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
