"""What one huge JSON-RPC message costs the daemon: its peak memory and the wait for the next answer.

    .venv/bin/python bench/frame_limit.py                                        # this tree
    ROOT=/work/main /work/main/.venv/bin/python bench/frame_limit.py             # the baseline

`python -m tether serve` (the scripted provider) of the interpreter's tree, per framing (LSP and
NDJSON) and size: `initialize`, then one `_tether/daemon/stats` request padded with whitespace to
SIZE bytes, written in 1 MiB pieces, then a second `_tether/daemon/stats`. Reported: the time
from the first byte of the big message to the second answer, what the big message got (refused
at the framing, or answered), and the daemon's peak RSS (VmHWM) at the end. A fresh daemon each.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(os.environ.get("ROOT", Path(__file__).resolve().parents[1]))
SCRIPT = ROOT / "examples" / "basic-turn.json"
SIZES_MIB = (64, 256, 1024)
PIECE = b" " * (1 << 20)


def _frame(framing: str, body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body if framing == "lsp" else body + b"\n"


def _peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def _answers(stdout: asyncio.StreamReader, framing: str, until_id: int) -> list[dict]:
    found: list[dict] = []
    while not any(a.get("id") == until_id for a in found):
        if framing == "lsp":
            header = await stdout.readuntil(b"\r\n\r\n")
            found.append(json.loads(await stdout.readexactly(int(header.split(b":")[1]))))
        else:
            found.append(json.loads(await stdout.readline()))
    return found


async def _one(framing: str, size_mib: int, home: Path) -> tuple[float, str, float]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tether", "serve", "--provider", "scripted", "--script", str(SCRIPT),
        cwd=home, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        env={"TETHER_HOME": str(home), "XDG_CONFIG_HOME": str(home / "xdg"), "PATH": "/usr/bin:/bin"},
        limit=1 << 20,
    )
    assert proc.stdin is not None and proc.stdout is not None
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    proc.stdin.write(_frame(framing, json.dumps(init).encode()))
    await _answers(proc.stdout, framing, 1)
    head = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "_tether/daemon/stats", "params": {}}).encode()
    size = size_mib << 20
    start = time.perf_counter()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % size + head if framing == "lsp" else head)
    for _ in range((size - len(head)) >> 20):
        proc.stdin.write(PIECE)
        await proc.stdin.drain()
    proc.stdin.write(b" " * ((size - len(head)) % (1 << 20)) + (b"" if framing == "lsp" else b"\n"))
    stats = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "_tether/daemon/stats", "params": {}}).encode()
    proc.stdin.write(_frame(framing, stats))
    answers = await _answers(proc.stdout, framing, 3)
    elapsed = (time.perf_counter() - start) * 1000
    rss = _peak_rss_mib(proc.pid)
    big = [a for a in answers if a.get("id") in (2, None)]
    got = "refused (-32600)" if big and big[0].get("error", {}).get("code") == -32600 else "answered"
    proc.stdin.close()
    await proc.wait()
    return elapsed, got, rss


async def main() -> None:
    print(f"tree: {ROOT}")
    print("| framing | message | wait for the next answer | the big message | peak RSS |")
    print("|---|---|---|---|---|")
    for framing in ("lsp", "ndjson"):
        for size_mib in SIZES_MIB:
            with tempfile.TemporaryDirectory() as tmp:
                elapsed, got, rss = await _one(framing, size_mib, Path(tmp))
            print(f"| {framing} | {size_mib} MiB | {elapsed:,.0f} ms | {got} | {rss:,.0f} MiB |", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
