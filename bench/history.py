"""Long histories (issue 5's benchmark; figures go to bench/RESULTS.md).

    python bench/history.py

1. `session/load` of a 10,000-message session: request -> last replayed update (and the
   answer), median of 5; also request -> first replayed update.
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

The machine's own speed varies (other work on it): `client_*` are the client's own JSON
work, a yardstick for comparing runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "daemon"), str(ROOT / "protocol")]
from run import RawClient, init_params, proc_cpu_s  # noqa: E402
from tether_protocol._framing import encode_lsp  # noqa: E402
from tether_protocol._json import dumps, loads  # noqa: E402

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
        bodies = [
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


def send_text(c: RawClient, method: str, params: dict, key: str, text: str) -> int:
    """`c.send(method, {**params, key: <the JSON value text>})`, the text spliced in unparsed."""
    c.next_id += 1
    head = dumps({"jsonrpc": "2.0", "id": c.next_id, "method": method, "params": params}).decode()
    body = f'{head[:-2]},"{key}":{text}}}}}'.encode()
    assert c.proc.stdin is not None
    c.proc.stdin.write(encode_lsp(body))
    return c.next_id


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="tether-hist-"))
    ws = scratch / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "README.md").write_text("bench\n")
    home = scratch / "home"
    asyncio.run(make_session(home, ws, "sess_big", 10_000))
    asyncio.run(make_session(home, ws, "sess_small", 100))
    script = scratch / "turn.json"
    script.write_text(json.dumps({"replies": [
        {"when": {"step": 1}, "text": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "README.md"}}]},
        {"text": "Done."},
    ]}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env.update(TETHER_HOME=str(home), TETHER_PROBE_PORTS="")
    argv = [sys.executable, "-m", "tether", "serve", "--provider", "scripted", "--script", str(script)]
    out: dict[str, object] = {}

    load_times, firsts, dump_times, restores, from_text, replayed = [], [], [], [], [], 0
    client_parse, client_encode, std_parse, std_encode = [], [], [], []
    for _ in range(5):
        c = RawClient(argv, env, ws)
        c.until_id(c.send("initialize", init_params(ws)))
        # wait until the daemon is past its start-up import (the fast start answers
        # initialize before it), so the figure is the load itself
        c.until_id(c.send("session/list", {"cwd": str(ws)}))
        t0 = time.perf_counter()
        msg_id = c.send("session/load", {"sessionId": "sess_big", "cwd": str(ws), "mcpServers": []})
        replayed = 0
        while True:
            m = c.read()
            if m.get("method") == "session/update":
                if not replayed:
                    firsts.append((time.perf_counter() - t0) * 1000)
                replayed += 1
            elif m.get("id") == msg_id:
                break
        load_times.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        snap = c.until_id(c.send("_tether/session/dump", {"sessionId": "sess_big"}))
        dump_times.append((time.perf_counter() - t0) * 1000)
        snapshot = snap.get("result")
        if snapshot is not None:
            t0 = time.perf_counter()
            c.until_id(c.send("_tether/session/restore", {"snapshot": snapshot, "cwd": str(ws)}))
            restores.append((time.perf_counter() - t0) * 1000)
            # the client's own share of the two figures above
            raw = dumps(snap)
            request = {"jsonrpc": "2.0", "id": 0, "method": "_tether/session/restore",
                       "params": {"snapshot": snapshot, "cwd": str(ws)}}
            for parse, encode, parsed, encoded in (
                (loads, dumps, client_parse, client_encode),
                (json.loads, lambda v: json.dumps(v).encode(), std_parse, std_encode),
            ):
                t0 = time.perf_counter()
                parse(raw)
                parsed.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                encode(request)
                encoded.append((time.perf_counter() - t0) * 1000)
            # a client holding the snapshot as text (a dump file) sends it as it is
            text = dumps(snapshot).decode()
            t0 = time.perf_counter()
            c.until_id(send_text(c, "_tether/session/restore", {"cwd": str(ws)}, "snapshot", text))
            from_text.append((time.perf_counter() - t0) * 1000)
        c.close()
    out["load_10k_ms"] = round(statistics.median(load_times), 1)
    out["load_10k_first_update_ms"] = round(statistics.median(firsts), 1)
    out["replayed_updates"] = replayed
    out["dump_10k_ms"] = round(statistics.median(dump_times), 1)
    out["restore_10k_ms"] = round(statistics.median(restores), 1) if restores else None
    out["restore_10k_from_text_ms"] = round(statistics.median(from_text), 1) if from_text else None
    if client_parse:
        out["client_parse_dump_ms"] = round(statistics.median(client_parse), 1)
        out["client_encode_restore_ms"] = round(statistics.median(client_encode), 1)
        out["client_parse_dump_stdlib_ms"] = round(statistics.median(std_parse), 1)
        out["client_encode_restore_stdlib_ms"] = round(statistics.median(std_encode), 1)

    for name, sid in (("turn_cpu_100", "sess_small"), ("turn_cpu_10k", "sess_big")):
        samples = []
        for _ in range(5):
            c = RawClient(argv, env, ws)
            c.until_id(c.send("initialize", init_params(ws)))
            c.until_id(c.send("session/list", {"cwd": str(ws)}))
            c.until_id(c.send("session/resume", {"sessionId": sid, "cwd": str(ws), "mcpServers": []}))
            cpu0 = proc_cpu_s(c.proc.pid)
            for _ in range(TURNS_PER_SAMPLE):  # CPU is counted in 10 ms ticks: average 10 turns
                c.until_id(c.send("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "again"}]}))
            samples.append((proc_cpu_s(c.proc.pid) - cpu0) / TURNS_PER_SAMPLE)
            c.close()
        out[name + "_s"] = round(statistics.median(samples), 4)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
