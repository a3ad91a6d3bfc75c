"""The HTTP providers under load: a 20,000-delta reply through `tether serve --provider openai|anthropic`.

    python bench/providers.py [--runs 3] [--deltas 20000]

A local SSE server (standard-library asyncio, in a subprocess, 127.0.0.1 only, bounded
in requests and idle time) answers every model request with a pre-encoded stream of
N deltas of 4 characters each, in OpenAI chat-completion chunk format (`/v1/chat/
completions`) or Anthropic Messages format (`/v1/messages`), written as fast as the
socket takes it. A raw stdio client (bench/run.py's `RawClient`) drives the daemon and
reads as fast as it can. Per turn it records:

- prompt -> model request: `session/prompt` written -> the request fully read by the
  server (both processes read CLOCK_MONOTONIC, which is system-wide on Linux);
- prompt -> first / last character: -> the first / last `agent_message_chunk` read;
- daemon CPU: utime+stime from /proc/<pid>/stat, prompt written -> prompt answered;
- peak RSS: VmHWM from /proc/<pid>/status after the turn.

Each run is a fresh daemon: the first turn is "cold" (the provider and its HTTP stack
are created on the first prompt), a second turn in a new session of the same daemon is
"warm". Medians of `--runs` runs are reported. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from run import RawClient, init_params, proc_cpu_s  # noqa: E402

MAX_REQUESTS = 64  # the server exits after this many requests...
IDLE_EXIT_S = 120.0  # ...or after this long without one


def now() -> float:
    return time.clock_gettime(time.CLOCK_MONOTONIC)


# ---- the SSE server (runs in its own process: `providers.py --serve N`) -------------------


def openai_stream(deltas: int) -> bytes:
    head = '{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1750000000,"model":"bench","choices":['
    parts = [f'data: {head}{{"index":0,"delta":{{"role":"assistant","content":""}},"finish_reason":null}}]}}\n\n']
    one = f'data: {head}{{"index":0,"delta":{{"content":"abcd"}},"finish_reason":null}}]}}\n\n'
    parts.append(one * deltas)
    parts.append(f'data: {head}{{"index":0,"delta":{{}},"finish_reason":"stop"}}]}}\n\n')
    parts.append(f'data: {head}],"usage":{{"prompt_tokens":900,"completion_tokens":{deltas},"total_tokens":{900 + deltas}}}}}\n\n')
    parts.append("data: [DONE]\n\n")
    return "".join(parts).encode()


def anthropic_stream(deltas: int) -> bytes:
    def ev(name: str, data: dict) -> str:
        return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"

    start = {"type": "message_start", "message": {
        "id": "msg_bench", "type": "message", "role": "assistant", "content": [], "model": "bench",
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 900, "output_tokens": 1}}}
    one = ev("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": "abcd"}})
    return "".join([
        ev("message_start", start),
        ev("content_block_start", {"type": "content_block_start", "index": 0,
                                   "content_block": {"type": "text", "text": ""}}),
        ev("ping", {"type": "ping"}),
        one * deltas,
        ev("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ev("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                             "usage": {"output_tokens": deltas}}),
        ev("message_stop", {"type": "message_stop"}),
    ]).encode()


async def serve(deltas: int) -> None:
    bodies = {"/v1/chat/completions": openai_stream(deltas), "/v1/messages": anthropic_stream(deltas)}
    served = 0
    last = now()
    done = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal served, last
        accepted = now()
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            path = lines[0].split(" ")[1]
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            request = await reader.readexactly(length)
            arrived = now()
            body = bodies.get(path)
            if body is None:
                writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            else:
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                             b"cache-control: no-cache\r\nconnection: close\r\n\r\n")
                view = memoryview(body)
                for i in range(0, len(body), 1 << 16):
                    writer.write(view[i : i + (1 << 16)])
                    await writer.drain()
            await writer.drain()
            print(json.dumps({"path": path, "accepted": accepted, "arrived": arrived, "sent": now(),
                              "request_bytes": len(request), "reply_bytes": len(body or b"")}), flush=True)
        except (ConnectionError, asyncio.IncompleteReadError, ValueError, IndexError):
            pass
        finally:
            writer.close()
            served += 1
            last = now()
            if served >= MAX_REQUESTS:
                done.set()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(json.dumps({"port": server.sockets[0].getsockname()[1]}), flush=True)
    async with server:
        while not done.is_set() and now() - last < IDLE_EXIT_S:
            try:
                await asyncio.wait_for(done.wait(), 1.0)
            except asyncio.TimeoutError:
                pass


# ---- the client side -------------------------------------------------------------------------


class SSEServer:
    def __init__(self, deltas: int) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(deltas)], stdout=subprocess.PIPE, text=True,
        )
        assert self.proc.stdout is not None
        self.port = json.loads(self.proc.stdout.readline())["port"]

    def next_request(self) -> dict:
        assert self.proc.stdout is not None
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def turn(c: RawClient, server: SSEServer, ws: Path, deltas: int) -> dict:
    sid = c.until_id(c.send("session/new", {"cwd": str(ws), "mcpServers": []}))["result"]["sessionId"]
    cpu0 = proc_cpu_s(c.proc.pid)
    t0 = now()
    pid = c.send("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "stream a lot"}]})
    first = last = None
    chars = notes = 0
    while True:
        m = c.read()
        if m.get("method") == "session/update":
            u = m["params"]["update"]
            if u["sessionUpdate"] == "agent_message_chunk":
                last = now()
                first = first or last
                chars += len(u["content"]["text"])
                notes += 1
        elif m.get("id") == pid:
            answered = now()
            break
    cpu = proc_cpu_s(c.proc.pid) - cpu0
    seen = server.next_request()
    if "result" not in m or m["result"].get("stopReason") != "end_turn" or chars != 4 * deltas:
        raise SystemExit(f"turn went wrong: {m} ({chars} characters)")
    return {
        "to_request_ms": (seen["arrived"] - t0) * 1000,
        "to_first_ms": (first - t0) * 1000,
        "to_last_ms": (last - t0) * 1000,
        "first_to_last_ms": (last - first) * 1000,
        "server_write_ms": (seen["sent"] - seen["arrived"]) * 1000,
        "answered_ms": (answered - t0) * 1000,
        "cpu_s": cpu,
        "rss_mb": peak_rss_mb(c.proc.pid),
        "notifications": notes,
        "request_bytes": seen["request_bytes"],
        "reply_bytes": seen["reply_bytes"],
    }


def run_once(kind: str, server: SSEServer, env: dict, ws: Path, deltas: int) -> dict:
    base = f"http://127.0.0.1:{server.port}" + ("/v1" if kind == "openai" else "")
    argv = [sys.executable, "-m", "tether", "serve", "--provider", kind, "--base-url", base,
            "--model", "bench-model", "--max-retries", "0"]
    c = RawClient(argv, env, ws)
    try:
        c.until_id(c.send("initialize", init_params(ws)))
        cold = turn(c, server, ws, deltas)
        warm = turn(c, server, ws, deltas)
    finally:
        cpu_total, rss_kib = c.close()
    return {"cold": cold, "warm": warm, "process_cpu_s": cpu_total, "process_peak_rss_mb": rss_kib / 1024}


def median_of(runs: list[dict], which: str) -> dict:
    keys = runs[0][which].keys()
    return {k: statistics.median(r[which][k] for r in runs) for k in keys}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--serve", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.serve))
        return

    scratch = Path(tempfile.mkdtemp(prefix="tether-bench-providers-"))
    ws = scratch / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("bench\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "OPENAI_", "ANTHROPIC_"))}
    env.update({
        "TETHER_HOME": str(scratch / "home"),
        "TETHER_PROBE_PORTS": "",
        "OPENAI_API_KEY": "bench-not-a-key",
        "ANTHROPIC_API_KEY": "bench-not-a-key",
    })
    server = SSEServer(args.deltas)
    out: dict = {"deltas": args.deltas, "runs": args.runs}
    try:
        for kind in ("openai", "anthropic"):
            runs = [run_once(kind, server, env, ws, args.deltas) for _ in range(args.runs)]
            out[kind] = {
                "cold": median_of(runs, "cold"),
                "warm": median_of(runs, "warm"),
                "process_cpu_s": statistics.median(r["process_cpu_s"] for r in runs),
                "process_peak_rss_mb": statistics.median(r["process_peak_rss_mb"] for r in runs),
                "all": runs,
            }
    finally:
        server.close()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
