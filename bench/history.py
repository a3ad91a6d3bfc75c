"""Long histories (issue 5's benchmark; figures go to bench/RESULTS.md).

    .venv/bin/python bench/history.py

1. `session/load` of a 10,000-message session: request -> last replayed update (and the
   answer), median of 5; also request -> first replayed update, and the daemon's RSS
   (VmRSS) and peak RSS (VmHWM) right after the load's answer.
2. `_tether/session/dump` and `_tether/session/restore` of that session, median of 5. The
   dump figure includes the client's decoding of the 2.7 MB answer, the restore figure
   the client's encoding of the request (both also reported on their own, as `client_*`,
   with the Python client library's codec, tether_protocol._json, and with the standard
   library's `json`, as `client_*_stdlib`). `restore_10k_from_text` is a restore whose
   client holds the snapshot as JSON text (a dump file) and sends it as it is.
3. daemon CPU of one turn (a prompt, one tool call, an answer) in a session with 100 vs
   10,000 stored messages: the mean of 10 turns in a row (CPU time comes in 10 ms ticks),
   median of 5. A conversation that long has been compacted many times (the model's window
   cannot hold it), so the synthetic session ends with a compaction summary, as a real one
   would: what is sent stays small while the stored history grows.

The client is `tether_client`'s JSON-RPC peer (bench/spawned.py). The machine's own speed varies (other work on it): `client_*` are the client's own JSON
work, a yardstick for comparing runs.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "daemon"), str(ROOT / "protocol")]
from spawned import Spawned, peak_rss_mb  # noqa: E402
from tether_side import init_params, prompt_params  # noqa: E402

from tether_protocol import dumps, loads  # noqa: E402

TURNS_PER_SAMPLE = 10


async def make_session(home: Path, ws: Path, session_id: str, count: int) -> None:
    from tether.store import HistoryStore, MessageRecord, database_path

    store = await HistoryStore.open(database_path(ws, home))
    await store.create_session(session_id, str(ws), "ask", title=f"{count} messages")
    per_turn = 4
    for t in range(count // per_turn):
        turn_id = f"{session_id}_t{t}"
        await store.begin_turn(session_id, turn_id, MessageRecord("user", {
            "role": "user", "content": [{"type": "text", "text": f"question {t}: how does part {t} work?"}]}))
        call = f"c{t}"
        bodies: list[dict[str, Any]] = [
            {"role": "assistant", "text": f"Let me look at part {t}.", "tool_calls": [
                {"id": call, "name": "read_file", "arguments": {"path": f"src/part{t}.py"}}]},
            {"role": "tool", "tool_call_id": call, "name": "read_file",
             "content": f"     1\tdef part{t}():\n     2\t    return {t}\n", "is_error": False},
            {"role": "assistant", "text": f"Part {t} returns {t}. " * 3},
        ]
        if t == count // per_turn - 2:
            bodies.append({"role": "user", "content": [{"type": "text", "text": "Summary of the earlier conversation: parts were explained."}],
                           "compaction": {"replaced": count - 8}})
        await store.append_messages(session_id, turn_id, [MessageRecord(b["role"], b) for b in bodies])
        await store.finish_turn(turn_id, "complete", "end_turn")
    await store.close()


async def open_daemon(argv: list[str], env: dict[str, str], ws: Path) -> Spawned:
    c = await Spawned.start(argv, env=env, cwd=ws)
    await c.request("initialize", init_params(ws))
    # wait until the daemon is past its start-up imports (the start path answers
    # initialize and session/list without the replay or the snapshots; its warm-up
    # imports them when the client is idle, after a second without a session), so the
    # figures are the requests themselves
    await c.request("session/list", {"cwd": str(ws)})
    await asyncio.sleep(1.5)
    c.queued()
    return c


def client_share(snapshot: Any, ws: Path, samples: dict[str, list[float]]) -> None:
    """The client's own share of the dump and restore figures, with both codecs."""
    raw = dumps({"jsonrpc": "2.0", "id": 1, "result": snapshot})
    request = {"jsonrpc": "2.0", "id": 0, "method": "_tether/session/restore",
               "params": {"snapshot": snapshot, "cwd": str(ws)}}
    codecs: list[tuple[str, Callable[[bytes], Any], Callable[[Any], bytes]]] = [
        ("client", loads, dumps),
        ("std", json.loads, lambda v: json.dumps(v).encode()),
    ]
    for name, parse, encode in codecs:
        t0 = time.perf_counter()
        parse(raw)
        samples[f"{name}_parse"].append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        encode(request)
        samples[f"{name}_encode"].append((time.perf_counter() - t0) * 1000)


def rss_mb(pid: int) -> float:
    """VmRSS of a running process, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


async def timed(c: Spawned, samples: list[float], method: str, params: dict[str, Any]) -> Any:
    t0 = time.perf_counter()
    result = await c.request(method, params)
    samples.append((time.perf_counter() - t0) * 1000)
    return result


async def load_dump_restore(argv: list[str], env: dict[str, str], ws: Path) -> dict[str, Any]:
    samples: dict[str, list[float]] = collections.defaultdict(list)
    replayed = 0
    for _ in range(5):
        c = await open_daemon(argv, env, ws)
        t0 = time.perf_counter()
        await timed(c, samples["load"], "session/load", {"sessionId": "sess_big", "cwd": str(ws), "mcpServers": []})
        updates = [t for t, method, _p in c.queued() if method == "session/update"]
        replayed = len(updates)
        samples["first"].append((updates[0] - t0) * 1000)
        samples["rss"].append(rss_mb(c.proc.pid))
        samples["peak"].append(peak_rss_mb(c.proc.pid))
        snapshot = await timed(c, samples["dump"], "_tether/session/dump", {"sessionId": "sess_big"})
        await timed(c, samples["restore"], "_tether/session/restore", {"snapshot": snapshot, "cwd": str(ws)})
        client_share(snapshot, ws, samples)
        # a client holding the snapshot as text (a dump file) sends it as it is
        text = orjson.Fragment(dumps(snapshot))
        await timed(c, samples["from_text"], "_tether/session/restore", {"cwd": str(ws), "snapshot": text})
        await c.close()

    def med(name: str) -> float:
        return round(statistics.median(samples[name]), 1)

    return {
        "load_10k_ms": med("load"), "load_10k_first_update_ms": med("first"), "replayed_updates": replayed,
        "rss_after_load_mb": med("rss"), "peak_rss_after_load_mb": med("peak"),
        "dump_10k_ms": med("dump"), "restore_10k_ms": med("restore"), "restore_10k_from_text_ms": med("from_text"),
        "client_parse_dump_ms": med("client_parse"), "client_encode_restore_ms": med("client_encode"),
        "client_parse_dump_stdlib_ms": med("std_parse"), "client_encode_restore_stdlib_ms": med("std_encode"),
    }


async def turn_cpu(argv: list[str], env: dict[str, str], ws: Path, sid: str) -> float:
    samples = []
    for _ in range(5):
        c = await open_daemon(argv, env, ws)
        await c.request("session/resume", {"sessionId": sid, "cwd": str(ws), "mcpServers": []})
        cpu0 = c.cpu_s()
        for _ in range(TURNS_PER_SAMPLE):  # CPU is counted in 10 ms ticks: average 10 turns
            await c.request("session/prompt", prompt_params(sid, "again"))
        samples.append((c.cpu_s() - cpu0) / TURNS_PER_SAMPLE)
        c.queued()
        await c.close()
    return round(statistics.median(samples), 4)


async def run() -> dict[str, Any]:
    scratch = Path(tempfile.mkdtemp(prefix="tether-hist-"))
    ws = scratch / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "README.md").write_text("bench\n")
    home = scratch / "home"
    await make_session(home, ws, "sess_big", 10_000)
    await make_session(home, ws, "sess_small", 100)
    script = scratch / "turn.json"
    script.write_text(json.dumps({"replies": [
        {"when": {"step": 1}, "text": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "README.md"}}]},
        {"text": "Done."},
    ]}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env.update(TETHER_HOME=str(home), TETHER_PROBE_PORTS="")
    argv = [sys.executable, "-m", "tether", "serve", "--provider", "scripted", "--script", str(script)]
    out = await load_dump_restore(argv, env, ws)
    out["turn_cpu_100_s"] = await turn_cpu(argv, env, ws, "sess_small")
    out["turn_cpu_10k_s"] = await turn_cpu(argv, env, ws, "sess_big")
    return out


def main() -> None:
    print(json.dumps(asyncio.run(run()), indent=2))


if __name__ == "__main__":
    main()
