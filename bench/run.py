"""Tether benchmarks with the scripted provider (figures go to bench/RESULTS.md).

    python bench/run.py [--runs 10]

1. spawn -> `initialize` answer (median of N), and spawn -> first `session/new` answer
2. `session/prompt` sent -> first `agent_message_chunk` received (median of N)
3. a 20,000-delta turn (4 characters each): first -> last character at a raw client
   reading as fast as it can, daemon CPU seconds (user+sys of the process), peak RSS

The client is a raw stdio reader (framing + JSON decoding only, with the codec of the
Python client library, tether_protocol._json), so the numbers are the daemon's. Nothing here is asserted; tests do not time things.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "protocol")]
from tether_protocol._framing import LspFrameDecoder, encode_lsp  # noqa: E402
from tether_protocol._json import dumps, loads  # noqa: E402


class RawClient:
    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.t_spawn = time.perf_counter()
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, cwd=cwd, bufsize=0,
        )
        self.decoder = LspFrameDecoder()
        self.queue: collections.deque[dict] = collections.deque()
        self.next_id = 0

    def send(self, method: str, params: dict, *, notify: bool = False) -> int:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        assert self.proc.stdin is not None
        self.proc.stdin.write(encode_lsp(dumps(message)))
        return self.next_id

    def read(self) -> dict:
        assert self.proc.stdout is not None
        while not self.queue:
            data = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not data:
                raise EOFError("daemon closed stdout")
            self.queue.extend(loads(b) for b in self.decoder.feed(data))
        return self.queue.popleft()

    def until_id(self, msg_id: int) -> dict:
        while True:
            message = self.read()
            if message.get("id") == msg_id and "method" not in message:
                return message

    def close(self) -> tuple[float, int]:
        """Close stdin, wait, and return (cpu seconds, peak RSS KiB) of the daemon."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        _pid, _status, usage = os.wait4(self.proc.pid, 0)
        self.proc.returncode = 0
        return usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def daemon_argv(script: Path) -> list[str]:
    return [sys.executable, "-m", "tether", "serve", "--provider", "scripted", "--script", str(script)]


def init_params(ws: Path) -> dict:
    return {"protocolVersion": 1, "clientCapabilities": {}, "rootUri": ws.as_uri(), "capabilities": {}}


def bench_start(env: dict, ws: Path, script: Path, runs: int) -> dict:
    init_ms, new_ms = [], []
    for _ in range(runs):
        c = RawClient(daemon_argv(script), env, ws)
        c.until_id(c.send("initialize", init_params(ws)))
        init_ms.append((time.perf_counter() - c.t_spawn) * 1000)
        c.until_id(c.send("session/new", {"cwd": str(ws), "mcpServers": []}))
        new_ms.append((time.perf_counter() - c.t_spawn) * 1000)
        c.close()
    return {"init_ms": statistics.median(init_ms), "init_all": init_ms,
            "new_ms": statistics.median(new_ms)}


def bench_first_chunk(env: dict, ws: Path, script: Path, runs: int) -> dict:
    c = RawClient(daemon_argv(script), env, ws)
    c.until_id(c.send("initialize", init_params(ws)))
    sid = c.until_id(c.send("session/new", {"cwd": str(ws), "mcpServers": []}))["result"]["sessionId"]
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        pid = c.send("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]})
        first = None
        while True:
            m = c.read()
            if first is None and m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk":
                first = time.perf_counter()
            if m.get("id") == pid:
                break
        samples.append((first - t0) * 1000)
    c.close()
    return {"first_chunk_ms": statistics.median(samples), "all": samples}


def proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_big_turn(env: dict, ws: Path, script: Path) -> dict:
    c = RawClient(daemon_argv(script), env, ws)
    c.until_id(c.send("initialize", init_params(ws)))
    sid = c.until_id(c.send("session/new", {"cwd": str(ws), "mcpServers": []}))["result"]["sessionId"]
    cpu0 = proc_cpu_s(c.proc.pid)
    t0 = time.perf_counter()
    pid = c.send("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "big"}]})
    first = last = None
    chars = notes = 0
    while True:
        m = c.read()
        if m.get("method") == "session/update":
            u = m["params"]["update"]
            if u["sessionUpdate"] == "agent_message_chunk":
                now = time.perf_counter()
                first = first or now
                last = now
                chars += len(u["content"]["text"])
                notes += 1
        elif m.get("id") == pid:
            break
    turn_cpu = proc_cpu_s(c.proc.pid) - cpu0
    stats = c.until_id(c.send("_tether/daemon/stats", {}))["result"]
    cpu, rss = c.close()
    return {
        "chars": chars, "notifications": notes,
        "prompt_to_first_ms": (first - t0) * 1000,
        "first_to_last_ms": (last - first) * 1000,
        "turn_cpu_s": turn_cpu, "daemon_cpu_s": cpu, "peak_rss_mb": rss / 1024,
        "writes": stats["writes"], "frames": stats["framesWritten"],
    }


def bench_cancel(env: dict, ws: Path, script: Path, runs: int) -> dict:
    """session/cancel sent after the first chunk -> prompt answered `cancelled`."""
    c = RawClient(daemon_argv(script), env, ws)
    c.until_id(c.send("initialize", init_params(ws)))
    sid = c.until_id(c.send("session/new", {"cwd": str(ws), "mcpServers": []}))["result"]["sessionId"]
    samples = []
    for _ in range(runs):
        pid = c.send("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "slow"}]})
        while True:
            m = c.read()
            if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk":
                break
        t0 = time.perf_counter()
        c.send("session/cancel", {"sessionId": sid}, notify=True)
        answer = c.until_id(pid)
        assert answer["result"]["stopReason"] == "cancelled", answer
        samples.append((time.perf_counter() - t0) * 1000)
    c.close()
    return {"cancel_ms": statistics.median(samples), "max_ms": max(samples)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="tether-bench-"))
    ws = scratch / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("bench\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env["TETHER_HOME"] = str(scratch / "home")
    small = scratch / "small.json"
    small.write_text(json.dumps({"replies": [{"text": "Hello there, this is a short answer."}]}))
    big = scratch / "big.json"
    big.write_text(json.dumps({"replies": [{"repeat": {"chunk": "abcd", "count": 20000}}]}))

    slow = scratch / "slow.json"
    slow.write_text(json.dumps({"replies": [{"text": "x" * 400, "chunk_size": 4, "delay_ms": 50}]}))

    cancel = bench_cancel(env, ws, slow, args.runs)
    start = bench_start(env, ws, small, args.runs)
    first = bench_first_chunk(env, ws, small, args.runs)
    turns = [bench_big_turn(env, ws, big) for _ in range(3)]
    big_turn = sorted(turns, key=lambda r: r["first_to_last_ms"])[1]
    print(json.dumps({"cancel": cancel, "start": start, "first_chunk": first, "big_turn": big_turn, "big_turn_all": turns}, indent=2))


if __name__ == "__main__":
    main()
