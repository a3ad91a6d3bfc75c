"""Big histories stay paged (issue 31, item 4; figures go to bench/RESULTS.md, "Issue 31: big histories").

    .venv/bin/python bench/bighistory.py [--gb 1.0] [--base /work/main] [--rounds 3]

A workspace history of about 1 GB, written straight into the store's tables in one
SQLite transaction (the schema made by `HistoryStore.open`, then plain `executemany`
and the search index's rows; fast, and the same rows the store writes): 2,000 sessions
of generated turns (a question, a tool call, a large tool result, an answer) over a
3,000-word vocabulary, and one session of 50,000 messages (12,500 turns) ending with a
compaction summary. Then, for each tree (`--base` first, then this one), each in a
fresh `tether serve` (so its peak RSS, VmHWM, is that request's):

1. `session/list` of the workspace (the first page; cold: the daemon's first request,
   which opens the history, then again) and `_tether/session/search` for a word in
   most messages: answer time. Every later daemon opens the history the same way first.
2. `session/load` of the 50,000-message session: request -> first replayed update,
   request -> answer, replayed updates, the daemon's peak RSS.
3. `_tether/session/dump` of it: answer time and the daemon's peak RSS; then
   `_tether/session/restore` of that snapshot in another daemon: time and peak RSS.
4. (this tree) the same with a file: `_tether/session/dump` with `path`, then
   `_tether/session/restore` with `path`, each in a fresh daemon.

The trees alternate for ``--rounds`` rounds; each figure is the median of its rounds (the
samples are printed too). Every restore adds a copy of the big session to the history.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "daemon"), str(ROOT / "protocol")]
from spawned import Spawned, peak_rss_mb
from tether_side import init_params, tether_env

BIG, BIG_MESSAGES = "sess_big", 50_000
FILLER_SESSIONS = 2_000


class Words:
    def __init__(self) -> None:
        self.rng = random.Random(31)
        self.vocab = [
            "".join(self.rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(self.rng.randint(3, 9)))
            for _ in range(3000)
        ]

    def text(self, n: int) -> str:
        return " ".join(self.rng.choices(self.vocab, k=n))


def turn_rows(words: Words, sid: str, t: int, seq: int, now: float, result_words: int) -> tuple[list[Any], list[Any]]:
    """One turn's row and its four messages' rows (id left to SQLite) with their search text."""
    tid, call = f"{sid}_t{t}", f"c{t}"
    bodies: list[tuple[str, dict[str, Any], str]] = []
    question = f"question {t}: " + words.text(20)
    bodies.append(("user", {"role": "user", "content": [{"type": "text", "text": question}]}, question))
    bodies.append(
        (
            "assistant",
            {
                "role": "assistant",
                "text": f"Reading part {t}.",
                "tool_calls": [{"id": call, "name": "read_file", "arguments": {"path": f"src/p{t}.py"}}],
            },
            f"Reading part {t}.",
        )
    )
    result = words.text(result_words)
    bodies.append(
        (
            "tool",
            {"role": "tool", "tool_call_id": call, "name": "read_file", "content": result, "is_error": False},
            result,
        )
    )
    answer = "soak " + words.text(60)
    bodies.append(("assistant", {"role": "assistant", "text": answer}, answer))
    messages = [(sid, tid, seq + i, role, json.dumps(body), now, text) for i, (role, body, text) in enumerate(bodies)]
    return [tid, sid, t + 1, "complete", "end_turn", now, now], messages


def write_rows(db: sqlite3.Connection, turns: list[Any], messages: list[Any]) -> None:
    db.executemany(
        "INSERT INTO turns (id, session_id, seq, status, stop_reason, started_at, finished_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        turns,
    )
    for m in messages:
        cur = db.execute(
            "INSERT INTO messages (session_id, turn_id, seq, role, body, created_at) VALUES (?, ?, ?, ?, ?, ?)", m[:6]
        )
        db.execute("INSERT INTO messages_fts (rowid, text) VALUES (?, ?)", (cur.lastrowid, m[6]))


def add_session(
    db: sqlite3.Connection, words: Words, sid: str, ws: Path, turns: int, result_words: int, compact_at_end: bool
) -> None:
    now = time.time()
    db.execute(
        "INSERT INTO sessions (id, workspace, title, mode, created_at, updated_at) VALUES (?, ?, ?, 'ask', ?, ?)",
        (sid, str(ws), words.text(4), now, now),
    )
    turn_rows_, message_rows = [], []
    for t in range(turns):
        turn, messages = turn_rows(words, sid, t, 4 * t + 1, now, result_words)
        turn_rows_.append(turn)
        message_rows.extend(messages)
    if compact_at_end:  # a conversation this long has been compacted (see bench/history.py)
        summary = {
            "role": "user",
            "content": [{"type": "text", "text": "Summary of the earlier conversation."}],
            "compaction": {"replaced": 4 * turns - 8, "kept": 4},
        }
        message_rows.append(
            (
                sid,
                turn_rows_[-1][0],
                4 * turns + 1,
                "user",
                json.dumps(summary),
                now,
                "Summary of the earlier conversation.",
            )
        )
    write_rows(db, turn_rows_, message_rows)


async def make_history(home: Path, ws: Path, gigabytes: float) -> dict[str, Any]:
    from tether.store import HistoryStore, database_path

    path = database_path(ws, home)
    store = await HistoryStore.open(path)  # the schema, as the daemon makes it
    await store.close()
    words = Words()
    t0 = time.perf_counter()
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("PRAGMA journal_mode=OFF")  # one bulk load of a new file: nothing to roll back to
        db.execute("PRAGMA synchronous=OFF")
        db.execute("BEGIN")
        add_session(db, words, BIG, ws, BIG_MESSAGES // 4, 40, compact_at_end=True)
        per_session = max(1, int(gigabytes * 2**30 / FILLER_SESSIONS / 4 / 2_600))  # turns of ~2.6 KB stored each
        for n in range(FILLER_SESSIONS):
            add_session(db, words, f"sess_{n:05d}", ws, per_session, 300, compact_at_end=False)
        db.execute("COMMIT")
        db.execute("PRAGMA journal_mode=WAL")
        messages = db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    return {
        "db_gb": round(path.stat().st_size / 2**30, 2),
        "messages": messages,
        "build_s": round(time.perf_counter() - t0, 1),
    }


async def daemon(python: str, tree: Path, env: dict[str, str], ws: Path, cold: dict[str, Any] | None = None) -> Spawned:
    """A daemon past its start-up, its workspace's history open (by a `session/list`,
    timed into ``cold`` when given)."""
    script = ws.parent / "ok.json"
    script.write_text(json.dumps({"replies": [{"text": "ok"}]}))
    argv = [python, "-m", "tether", "serve", "--provider", "scripted", "--script", str(script)]
    env = {**env, "PYTHONPATH": os.pathsep.join(str(tree / p) for p in ("daemon", "protocol"))}
    c = await Spawned.start(argv, env=env, cwd=ws)
    await c.request("initialize", init_params(ws))
    _listed, ms = await timed(c, "session/list", {"cwd": str(ws)})
    if cold is not None:
        cold["list_cold_ms"] = ms
    await asyncio.sleep(1.5)  # past the start-up's warm-up imports: the figures are the requests
    c.queued()
    return c


async def timed(c: Spawned, method: str, params: dict[str, Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    result = await c.request(method, params)
    return result, round((time.perf_counter() - t0) * 1000, 1)


async def files(python: str, tree: Path, env: dict[str, str], ws: Path) -> dict[str, Any]:
    """`_tether/session/dump` to a file and `_tether/session/restore` from it, each in a fresh daemon."""
    out: dict[str, Any] = {}
    path = ws.parent / f"dump-{time.time_ns()}.json"
    c = await daemon(python, tree, env, ws)
    dumped, out["dump_file_ms"] = await timed(c, "_tether/session/dump", {"sessionId": BIG, "path": str(path)})
    out["dump_file_peak_rss_mb"] = round(peak_rss_mb(c.proc.pid), 1)
    out["dump_file_mb"] = round(dumped["bytes"] / 2**20, 1)
    await c.close()
    c = await daemon(python, tree, env, ws)
    _restored, out["restore_file_ms"] = await timed(c, "_tether/session/restore", {"path": str(path), "cwd": str(ws)})
    out["restore_file_peak_rss_mb"] = round(peak_rss_mb(c.proc.pid), 1)
    await c.close()
    path.unlink()
    return out


async def one_tree(python: str, tree: Path, env: dict[str, str], ws: Path, streamed: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    c = await daemon(python, tree, env, ws, out)
    listed, out["list_ms"] = await timed(c, "session/list", {"cwd": str(ws)})
    out["listed"] = len(listed["sessions"])
    found, out["search_ms"] = await timed(c, "_tether/session/search", {"query": "soak", "cwd": str(ws), "limit": 20})
    out["search_hits"] = len(found.get("hits", found.get("results", [])))
    out["list_search_peak_rss_mb"] = round(peak_rss_mb(c.proc.pid), 1)
    await c.close()

    c = await daemon(python, tree, env, ws)
    t0 = time.perf_counter()
    _answer, out["load_ms"] = await timed(c, "session/load", {"sessionId": BIG, "cwd": str(ws), "mcpServers": []})
    updates = [t for t, method, _p in c.queued() if method == "session/update"]
    out["load_first_update_ms"] = round((updates[0] - t0) * 1000, 1) if updates else None
    out["load_updates"] = len(updates)
    out["load_peak_rss_mb"] = round(peak_rss_mb(c.proc.pid), 1)
    await c.close()

    c = await daemon(python, tree, env, ws)
    snapshot, out["dump_ms"] = await timed(c, "_tether/session/dump", {"sessionId": BIG})
    out["dump_peak_rss_mb"] = round(peak_rss_mb(c.proc.pid), 1)
    await c.close()
    c = await daemon(python, tree, env, ws)
    _restored, out["restore_ms"] = await timed(c, "_tether/session/restore", {"snapshot": snapshot, "cwd": str(ws)})
    out["restore_peak_rss_mb"] = round(peak_rss_mb(c.proc.pid), 1)
    await c.close()
    del snapshot
    if streamed:  # the file forms: written and read a page at a time
        out.update(await files(python, tree, env, ws))
    return out


async def run(gigabytes: float, base: Path | None, history: Path | None, rounds: int) -> dict[str, Any]:
    scratch = history or Path(tempfile.mkdtemp(prefix="tether-big-"))
    ws, home = scratch / "ws", scratch / "home"
    out: dict[str, Any] = {"history": str(scratch)}
    if history is None:
        ws.mkdir()
        out["history"] = {"dir": str(scratch), **await make_history(home, ws, gigabytes)}
    env = tether_env(dict(os.environ), home)
    trees = ([("base", base)] if base else []) + [("this", ROOT)]
    samples: dict[str, list[dict[str, Any]]] = {name: [] for name, _tree in trees}
    for _round in range(rounds):  # the trees alternate: the machine's load falls on both alike
        for name, tree in trees:
            python = str(tree / ".venv" / "bin" / "python")
            samples[name].append(await one_tree(python, tree, env, ws, streamed=name == "this"))
    for name, runs in samples.items():  # the median of each figure, and every sample
        out[name] = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        out[f"{name}_samples"] = runs
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gb", type=float, default=1.0, help="size of the synthesised history")
    parser.add_argument("--base", type=Path, help="another checkout, run first on the same history")
    parser.add_argument("--history", type=Path, help="a history an earlier run made (its printed dir): not made again")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every figure (medians reported)")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.gb, args.base, args.history, args.rounds)), indent=2))


if __name__ == "__main__":
    main()
