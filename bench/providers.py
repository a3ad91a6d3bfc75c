"""The HTTP providers under load: a 20,000-delta reply through `tether serve --provider openai|anthropic`.

    .venv/bin/python bench/providers.py [--runs 3] [--warm-turns 3] [--base DIR] [--kinds openai,anthropic]
                                        [--server-mode bulk,per-event] [--pace-us U]

A local SSE server (bench/fake_model.py: standard-library asyncio, in a subprocess,
127.0.0.1 only, bounded in requests and idle time) answers every model request with a pre-encoded stream of
N deltas of 4 characters each, in OpenAI chat-completion chunk format (`/v1/chat/
completions`) or Anthropic Messages format (`/v1/messages`), written as fast as the
socket takes it: in 64 KiB writes (`--server-mode bulk`) or one SSE event per write with
TCP_NODELAY (`per-event`, how real servers write; `--pace-us`: that far apart at least,
as a model's tokens come). `tether_client`'s JSON-RPC peer (bench/spawned.py) drives the daemon and
reads as fast as it can, stamping each notification with the time it was read. Per turn it records:

- prompt -> model request: `session/prompt` written -> the request fully read by the
  server (both processes read CLOCK_MONOTONIC, which is system-wide on Linux);
- prompt -> first / last character: -> the first / last `agent_message_chunk` read;
- daemon CPU: utime+stime from /proc/<pid>/stat, prompt written -> prompt answered;
- peak RSS: VmHWM from /proc/<pid>/status after the turn.

The floor (issue 21): right before each warm turn, a plain httpx client in this process
POSTs to the same server and reads the same reply line by line (`aiter_lines`, counting
the `data:` lines, no JSON) and then as raw bytes to the end (`aiter_raw`). Each warm
turn's prompt -> last character is divided by the line floor read just before it, so the
ratio is taken under the same load; the ratios' median is reported. `--base DIR` (a
source tree, e.g. `git archive main | tar -x -C DIR`) runs that tree's daemon too,
alternating with this one's, so before and after share the machine's load.

Each run is a fresh daemon: the first turn is "cold" (the provider and its HTTP stack
are created on the first prompt), then `--warm-turns` turns in new sessions of the same
daemon are "warm" (their median is the run's figure). Medians of `--runs` runs are
reported. Nothing is asserted.
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

import httpx

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from fake_model import FakeModel
from spawned import Spawned
from tether_side import init_params, new_params, prompt_params, tether_argv, tether_env

# the peer stamps notifications with perf_counter, the server its lines with CLOCK_MONOTONIC
assert time.get_clock_info("perf_counter").implementation == "clock_gettime(CLOCK_MONOTONIC)"


def chunk_texts(c: Spawned) -> list[tuple[float, str]]:
    """(time read, text) of every `agent_message_chunk` queued so far."""
    out = []
    for t, method, params in c.queued():
        if method == "session/update" and params["update"]["sessionUpdate"] == "agent_message_chunk":
            out.append((t, str(params["update"]["content"]["text"])))
    return out


async def turn(c: Spawned, server: FakeModel, ws: Path, deltas: int) -> dict[str, Any]:
    sid = (await c.request("session/new", new_params(ws)))["sessionId"]
    c.queued()
    cpu0 = c.cpu_s()
    t0 = time.perf_counter()
    answer = await c.request("session/prompt", prompt_params(sid, "stream a lot"))
    answered = time.perf_counter()
    cpu = c.cpu_s() - cpu0
    chunks = chunk_texts(c)
    chars = sum(len(text) for _t, text in chunks)
    seen = model_request(server)
    if answer.get("stopReason") != "end_turn" or chars != 4 * deltas:
        raise SystemExit(f"turn went wrong: {answer} ({chars} characters)")
    first, last = chunks[0][0], chunks[-1][0]
    return {
        "to_request_ms": (seen["arrived"] - t0) * 1000,
        "to_first_ms": (first - t0) * 1000,
        "to_last_ms": (last - t0) * 1000,
        "first_to_last_ms": (last - first) * 1000,
        "server_write_ms": (seen["sent"] - seen["arrived"]) * 1000,
        "answered_ms": (answered - t0) * 1000,
        "cpu_s": cpu,
        "rss_mb": c.peak_rss_mb(),
        "notifications": len(chunks),
        "request_bytes": seen["request_bytes"],
        "reply_bytes": seen["reply_bytes"],
    }


PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}


def model_request(server: FakeModel) -> dict[str, Any]:
    """The next model request the server answered (a daemon also lists the models, at its own time)."""
    while True:
        seen = server.next_request()
        if seen["path"] in PATHS.values():
            return seen


async def floor(kind: str, server: FakeModel, deltas: int) -> dict[str, float]:
    """A plain client reading the same reply: line by line, then raw bytes to the end."""
    body = {"model": "bench-model", "stream": True, "messages": [{"role": "user", "content": "stream a lot"}]}
    out: dict[str, float] = {}
    async with httpx.AsyncClient(timeout=30.0) as client:
        for how in ("lines", "raw"):
            t0 = time.perf_counter()
            data_lines = 0
            async with client.stream("POST", server.url + PATHS[kind], json=body) as response:
                if how == "lines":
                    async for line in response.aiter_lines():
                        if line.startswith("data:"):
                            data_lines += 1
                else:
                    async for _chunk in response.aiter_raw():
                        pass
            out[f"floor_{how}_ms"] = (time.perf_counter() - t0) * 1000
            model_request(server)
            if how == "lines" and data_lines < deltas:
                raise SystemExit(f"floor read {data_lines} data lines")
    return out


async def run_once(
    kind: str, server: FakeModel, env: dict[str, str], ws: Path, deltas: int, warm_turns: int
) -> dict[str, Any]:
    """One daemon: a cold turn, then `warm_turns` warm ones, each right after a floor reading."""
    argv = tether_argv("serve", kind, model_url=server.url)
    if kind == "anthropic":  # its base URL has no /v1
        argv[argv.index("--base-url") + 1] = server.url
    c = await Spawned.start(argv, env=env, cwd=ws)
    warm, floors = [], []
    try:
        await c.request("initialize", init_params(ws))
        cold = await turn(c, server, ws, deltas)
        for _ in range(warm_turns):
            floors.append(await floor(kind, server, deltas))
            warm.append(await turn(c, server, ws, deltas))
            warm[-1]["ratio_to_floor"] = warm[-1]["to_last_ms"] / floors[-1]["floor_lines_ms"]
        rss = c.peak_rss_mb()
    finally:
        cpu_total = await c.close()
    return {
        "cold": cold,
        "warm": {k: statistics.median(w[k] for w in warm) for k in warm[0]},
        "floors": floors,
        "process_cpu_s": cpu_total,
        "process_peak_rss_mb": rss,
    }


def median_of(runs: list[dict[str, Any]], which: str) -> dict[str, float]:
    keys = runs[0][which].keys()
    return {k: statistics.median(r[which][k] for r in runs) for k in keys}


def source_env(env: dict[str, str], tree: Path | None) -> dict[str, str]:
    """The daemon's environment; with `tree`, its Python packages come from that source tree."""
    if tree is None:
        return env
    import compileall

    for package in ("daemon", "protocol", "clients"):
        compileall.compile_dir(str(tree / package), quiet=1)
    return {**env, "PYTHONPATH": os.pathsep.join(str(tree / p) for p in ("daemon", "protocol", "clients"))}


def summary(done: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "cold": median_of(done, "cold"),
        "warm": median_of(done, "warm"),
        "process_cpu_s": statistics.median(r["process_cpu_s"] for r in done),
        "process_peak_rss_mb": statistics.median(r["process_peak_rss_mb"] for r in done),
    }


async def run(
    runs: int,
    deltas: int,
    base: Path | None,
    kinds: list[str],
    warm_turns: int,
    mode: str = "bulk",
    pace_us: float = 0.0,
) -> dict[str, Any]:
    scratch = Path(tempfile.mkdtemp(prefix="tether-bench-providers-"))
    ws = scratch / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("bench\n")
    env = tether_env(dict(os.environ), scratch / "home")
    sides = {"this": env} | ({"base": source_env(env, base)} if base is not None else {})
    server = FakeModel(deltas, max_requests=1000, mode=mode, pace_us=pace_us)
    out: dict[str, Any] = {"deltas": deltas, "runs": runs, "server_mode": mode, "pace_us": pace_us}
    try:
        for kind in kinds:
            done: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
            for _ in range(runs):
                for side, side_env in sides.items():
                    done[side].append(await run_once(kind, server, side_env, ws, deltas, warm_turns))
            floors = [f for results in done.values() for r in results for f in r["floors"]]
            out[kind] = {"floor": {k: statistics.median(f[k] for f in floors) for k in floors[0]}}
            for side, results in done.items():
                out[kind][side] = summary(results) | {
                    "all": [
                        {
                            "warm_to_last_ms": r["warm"]["to_last_ms"],
                            "warm_cpu_s": r["warm"]["cpu_s"],
                            "ratio": r["warm"]["ratio_to_floor"],
                        }
                        for r in results
                    ],
                }
            out[kind]["floor_all"] = [round(f["floor_lines_ms"], 1) for f in floors]
    finally:
        server.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--base", type=Path, help="a source tree whose daemon runs too (before/after)")
    parser.add_argument("--kinds", default="openai,anthropic")
    parser.add_argument("--warm-turns", type=int, default=3, help="warm turns per daemon, each after a floor reading")
    parser.add_argument(
        "--server-mode",
        default="bulk",
        help="the fake server's writes: bulk (64 KiB each), per-event (one SSE event "
        "each), or both, comma-separated, one after the other in this run",
    )
    parser.add_argument("--pace-us", type=float, default=0.0, help="per-event mode: µs between events")
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    results = {
        mode: asyncio.run(run(args.runs, args.deltas, args.base, kinds, args.warm_turns, mode, args.pace_us))
        for mode in args.server_mode.split(",")
    }
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
