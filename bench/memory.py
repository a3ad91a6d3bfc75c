"""Retrieved memory's cost (issue 22; figures go to bench/RESULTS.md, "Issue 22: memory").

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/memory.py

A workspace history of 10,000 stored messages (250 earlier sessions of 40 messages: user,
assistant and tool messages of generated text over a 3,000-word vocabulary plus topic
words), then:

1. in process: `agent.memory.recall` (the search, the ranking and the block) for 30
   prompts, median and 95th percentile, against `store.search.search` (what
   `_tether/session/search` runs) for the same prompts, side by side; the tokens the block
   adds (mean, max; budget 1,500).
2. the daemon: two `tether serve` processes on the same history, `memory = "off"` and
   `memory = "on"`, prompts sent to each in turn (so the machine's noise falls on both):
   `session/prompt` request -> answer, median of 30 turns each; the difference is the
   time memory adds to a turn.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "daemon"), str(ROOT / "protocol")]
from spawned import Spawned
from tether_side import init_params, new_params, prompt_params, tether_env

SESSIONS, PER_SESSION = 250, 40
TOPICS = [
    "parser",
    "deploy",
    "login",
    "cache",
    "migration",
    "flaky",
    "tests",
    "docker",
    "billing",
    "search",
    "webhook",
    "timeout",
    "upload",
    "render",
    "payments",
    "schema",
    "logging",
    "retry",
    "queue",
    "locale",
]
PROMPTS = [
    f"why does the {a} {b} fail after the last {c} change?"
    for a, b, c in zip(TOPICS, TOPICS[5:] + TOPICS[:5], TOPICS[11:] + TOPICS[:11], strict=True)
] + [
    "how do I run the deploy script for staging",
    "the login page is slow again",
    "fix the flaky parser tests",
    "add retry to the webhook queue",
    "where is the cache invalidated",
    "update the billing schema migration",
    "what did we decide about logging",
    "explain the upload timeout",
    "rename the render module",
    "make search faster",
]


def _text(rng: random.Random, words: list[str], n: int) -> str:
    return " ".join(rng.choice(words) if rng.random() > 0.08 else rng.choice(TOPICS) for _ in range(n))


async def make_history(home: Path, ws: Path) -> None:
    from tether.store import HistoryStore, MessageRecord, database_path

    rng = random.Random(22)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(3000)]
    store = await HistoryStore.open(database_path(ws, home))
    for s in range(SESSIONS):
        sid = f"sess_old_{s}"
        await store.create_session(sid, str(ws), "ask", title=_text(rng, words, 4))
        for t in range(PER_SESSION // 4):
            tid = f"{sid}_t{t}"
            user = {"role": "user", "content": [{"type": "text", "text": _text(rng, words, 25)}]}
            await store.begin_turn(sid, tid, MessageRecord("user", user))
            bodies: list[dict[str, Any]] = [
                {
                    "role": "assistant",
                    "text": _text(rng, words, 20),
                    "tool_calls": [{"id": f"c{t}", "name": "grep", "arguments": {"pattern": rng.choice(TOPICS)}}],
                },
                {"role": "tool", "tool_call_id": f"c{t}", "name": "grep", "content": _text(rng, words, 60)},
                {"role": "assistant", "text": _text(rng, words, 80)},
            ]
            await store.append_messages(sid, tid, [MessageRecord(b["role"], b) for b in bodies])
            await store.finish_turn(tid, "complete", "end_turn")
    await store.close()


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
    }


async def in_process(home: Path, ws: Path) -> dict[str, Any]:
    from tether.agent.memory import recall
    from tether.store import HistoryStore, database_path
    from tether.store.search import search

    store = await HistoryStore.open(database_path(ws, home))
    recalled, searched, tokens, hits = [], [], [], []
    for prompt in PROMPTS * 2:  # the first pass warms SQLite's page cache for both
        t0 = time.perf_counter()
        found = await recall(store, "sess_now", prompt, budget_tokens=1_500)
        recalled.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        await search(store, prompt, limit=20)
        searched.append((time.perf_counter() - t0) * 1000)
        tokens.append(found.tokens)
        hits.append(len(found.hits))
    await store.close()
    half = len(PROMPTS)
    return {
        "recall": _ms(recalled[half:]),
        "search_for_scale": _ms(searched[half:]),
        "tokens_mean": round(statistics.mean(tokens), 1),
        "tokens_max": max(tokens),
        "hits_mean": round(statistics.mean(hits), 1),
    }


async def daemons(home: Path, ws: Path, scratch: Path) -> dict[str, Any]:
    script = scratch / "ok.json"
    script.write_text(json.dumps({"replies": [{"text": "ok"}]}))
    argv = [sys.executable, "-m", "tether", "serve", "--provider", "scripted", "--script", str(script)]
    base = tether_env(dict(os.environ), home)
    times: dict[str, list[float]] = {"off": [], "on": []}
    spawned: dict[str, tuple[Spawned, str]] = {}
    for memory in ("off", "on"):
        c = await Spawned.start(argv, env={**base, "TETHER_MEMORY": memory}, cwd=ws)
        await c.request("initialize", init_params(ws))
        sid = (await c.request("session/new", new_params(ws)))["sessionId"]
        await c.request("session/prompt", prompt_params(sid, "warm up the deploy cache"))
        spawned[memory] = (c, sid)
    for prompt in PROMPTS:
        for memory in ("off", "on"):
            c, sid = spawned[memory]
            t0 = time.perf_counter()
            await c.request("session/prompt", prompt_params(sid, prompt))
            times[memory].append((time.perf_counter() - t0) * 1000)
            c.queued()
    for c, _sid in spawned.values():
        await c.close()
    off, on = _ms(times["off"]), _ms(times["on"])
    return {
        "turn_memory_off": off,
        "turn_memory_on": on,
        "added_median_ms": round(on["median_ms"] - off["median_ms"], 2),
        "ratio_on_off": round(on["median_ms"] / off["median_ms"], 3),
    }


async def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="tether-memory-"))
    ws, home = scratch / "ws", scratch / "home"
    ws.mkdir()
    t0 = time.perf_counter()
    await make_history(home, ws)
    out: dict[str, Any] = {"stored_messages": SESSIONS * PER_SESSION, "build_s": round(time.perf_counter() - t0, 1)}
    out["in_process"] = await in_process(home, ws)
    out["daemon"] = await daemons(home, ws, scratch)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
