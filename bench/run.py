"""Tether benchmarks with the scripted provider (figures go to bench/RESULTS.md).

    .venv/bin/python bench/run.py [--runs 10]

1. spawn -> `initialize` answer (median of N), and spawn -> first `session/new` answer
2. `session/prompt` sent -> first `agent_message_chunk` received (median of N)
3. a 20,000-delta turn (4 characters each): first -> last character at a client
   reading as fast as it can, daemon CPU seconds (user+sys of the process), peak RSS
4. `session/cancel` sent after the first chunk -> the prompt answered `cancelled`

The client is `tether_client`'s JSON-RPC peer over the daemon's stdio (bench/spawned.py):
framing and JSON decoding with the client library's codec, every notification stamped
with the time it was read, so the numbers are the daemon's. Nothing here is asserted;
tests do not time things.
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
from spawned import Note, Spawned
from tether_side import init_params, new_params, prompt_params


def daemon_argv(script: Path) -> list[str]:
    return [sys.executable, "-m", "tether", "serve", "--provider", "scripted", "--script", str(script)]


async def open_session(argv: list[str], env: dict[str, str], ws: Path) -> tuple[Spawned, str]:
    c = await Spawned.start(argv, env=env, cwd=ws)
    await c.request("initialize", init_params(ws))
    session = await c.request("session/new", new_params(ws))
    return c, str(session["sessionId"])


def chunk_text(note: Note) -> str | None:
    """The text of an `agent_message_chunk` update, None for any other notification."""
    _t, method, params = note
    if method != "session/update" or params["update"]["sessionUpdate"] != "agent_message_chunk":
        return None
    return str(params["update"]["content"]["text"])


async def bench_start(argv: list[str], env: dict[str, str], ws: Path, runs: int) -> dict[str, Any]:
    init_ms, new_ms = [], []
    for _ in range(runs):
        c = await Spawned.start(argv, env=env, cwd=ws)
        await c.request("initialize", init_params(ws))
        init_ms.append(c.since_spawn_ms())
        await c.request("session/new", new_params(ws))
        new_ms.append(c.since_spawn_ms())
        await c.close()
    return {"init_ms": statistics.median(init_ms), "init_all": init_ms, "new_ms": statistics.median(new_ms)}


async def bench_first_chunk(argv: list[str], env: dict[str, str], ws: Path, runs: int) -> dict[str, Any]:
    c, sid = await open_session(argv, env, ws)
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        await c.request("session/prompt", prompt_params(sid, "hi"))
        first = next(t for t, *_ in (n for n in c.queued() if chunk_text(n) is not None))
        samples.append((first - t0) * 1000)
    await c.close()
    return {"first_chunk_ms": statistics.median(samples), "all": samples}


async def bench_big_turn(argv: list[str], env: dict[str, str], ws: Path) -> dict[str, Any]:
    c, sid = await open_session(argv, env, ws)
    cpu0 = c.cpu_s()
    t0 = time.perf_counter()
    await c.request("session/prompt", prompt_params(sid, "big"))
    turn_cpu = c.cpu_s() - cpu0
    chunks = [(n[0], text) for n in c.queued() if (text := chunk_text(n)) is not None]
    stats = await c.request("_tether/daemon/stats", {})
    rss = c.peak_rss_mb()
    cpu = await c.close()
    first, last = chunks[0][0], chunks[-1][0]
    return {
        "chars": sum(len(text) for _t, text in chunks),
        "notifications": len(chunks),
        "prompt_to_first_ms": (first - t0) * 1000,
        "first_to_last_ms": (last - first) * 1000,
        "turn_cpu_s": turn_cpu,
        "daemon_cpu_s": cpu,
        "peak_rss_mb": rss,
        "writes": stats["writes"],
        "frames": stats["framesWritten"],
    }


async def bench_cancel(argv: list[str], env: dict[str, str], ws: Path, runs: int) -> dict[str, Any]:
    """session/cancel sent after the first chunk -> prompt answered `cancelled`."""
    c, sid = await open_session(argv, env, ws)
    samples = []
    for _ in range(runs):
        _id, answer = c.rpc.request_future("session/prompt", prompt_params(sid, "slow"))
        while chunk_text(await c.next_note()) is None:
            pass
        t0 = time.perf_counter()
        c.notify("session/cancel", {"sessionId": sid})
        result = await answer
        assert result["stopReason"] == "cancelled", result
        samples.append((time.perf_counter() - t0) * 1000)
        c.queued()
    await c.close()
    return {"cancel_ms": statistics.median(samples), "max_ms": max(samples)}


def scripts(scratch: Path) -> dict[str, Path]:
    bodies = {
        "small": {"replies": [{"text": "Hello there, this is a short answer."}]},
        "big": {"replies": [{"repeat": {"chunk": "abcd", "count": 20000}}]},
        "slow": {"replies": [{"text": "x" * 400, "chunk_size": 4, "delay_ms": 50}]},
    }
    paths = {}
    for name, body in bodies.items():
        paths[name] = scratch / f"{name}.json"
        paths[name].write_text(json.dumps(body))
    return paths


async def run(runs: int) -> dict[str, Any]:
    scratch = Path(tempfile.mkdtemp(prefix="tether-bench-"))
    ws = scratch / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("bench\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env["TETHER_HOME"] = str(scratch / "home")
    script = scripts(scratch)
    cancel = await bench_cancel(daemon_argv(script["slow"]), env, ws, runs)
    start = await bench_start(daemon_argv(script["small"]), env, ws, runs)
    first = await bench_first_chunk(daemon_argv(script["small"]), env, ws, runs)
    turns = [await bench_big_turn(daemon_argv(script["big"]), env, ws) for _ in range(3)]
    big_turn = sorted(turns, key=lambda r: r["first_to_last_ms"])[1]
    return {"cancel": cancel, "start": start, "first_chunk": first, "big_turn": big_turn, "big_turn_all": turns}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.runs)), indent=2))


if __name__ == "__main__":
    main()
