"""What a large prompt costs the daemon, and what refusing one over `max_message_mib` costs.

    .venv/bin/python bench/message_size.py            # this tree
    /work/main/.venv/bin/python bench/message_size.py # the baseline tree (its own venv)

`python -m tether acp` (NDJSON, the scripted provider, `examples/v2-idempotency.json`) of the
interpreter's tree; per size: one `session/prompt` of that many MiB of ASCII text on a new
session, its wall time from the request written to the answer read, whether it was accepted,
and the daemon's peak RSS (VmHWM) after it. Each size gets a fresh daemon.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "v2-idempotency.json"
SIZES_MIB = (0.004, 1, 4, 8, 9, 64)


async def _request(proc: asyncio.subprocess.Process, rid: int, method: str, params: dict[str, object]) -> dict:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode() + b"\n")
    await proc.stdin.drain()
    while True:
        message = json.loads(await proc.stdout.readline())
        if message.get("id") == rid and "method" not in message:
            return message


def _peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def _one(size_mib: float, home: Path, workspace: Path) -> tuple[float, bool, float]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tether",
        "acp",
        "--provider",
        "scripted",
        "--script",
        str(SCRIPT),
        cwd=workspace,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env={"TETHER_HOME": str(home), "XDG_CONFIG_HOME": str(home / "xdg"), "PATH": "/usr/bin:/bin"},
        limit=1 << 30,
    )
    await _request(proc, 1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    new = await _request(proc, 2, "session/new", {"cwd": str(workspace), "mcpServers": []})
    text = "x" * int(size_mib * 1024 * 1024)
    started = time.perf_counter()
    answer = await _request(
        proc, 3, "session/prompt", {"sessionId": new["result"]["sessionId"], "prompt": [{"type": "text", "text": text}]}
    )
    wall = time.perf_counter() - started
    rss = _peak_rss_mib(proc.pid)
    assert proc.stdin is not None
    proc.stdin.close()
    await proc.wait()
    return wall, "result" in answer, rss


async def main() -> None:
    print(f"tree: {ROOT}")
    print("| prompt text | answered in | accepted | daemon peak RSS |")
    print("|---|---|---|---|")
    for size in SIZES_MIB:
        with tempfile.TemporaryDirectory() as tmp:
            workspace = Path(tmp) / "ws"
            workspace.mkdir()
            wall, accepted, rss = await _one(size, Path(tmp) / "home", workspace)
        print(f"| {size:g} MiB | {wall * 1000:.0f} ms | {'yes' if accepted else 'refused'} | {rss:.0f} MiB |")


if __name__ == "__main__":
    asyncio.run(main())
