"""What `tether acp` spends before its `initialize` answer, trees side by side in one run.

    .venv/bin/python bench/initialize_cost.py [--runs 21] [--baseline PYTHON ...] [--no-valgrind] [--client KIND]

Each tree (this checkout's interpreter, and each `--baseline`: another checkout's venv) gets
its own Tether home, warmed by one whole start (`initialize`, `session/new`: the start caches
are saved). Then:

1. instructions from exec to the answer: valgrind's `I refs` (cachegrind, no cache model) of
   one spawn that ends the moment the answer is written. The count does not move with the
   machine's load (the same tree gives the same count to a few hundred instructions), so it
   is the figure to compare on a busy machine;
2. `--runs` rounds of fresh spawns, the trees alternating: spawn -> answer (wall) and the
   process's CPU at the answer (its threads' run time from /proc/PID/task/*/schedstat).

The client sends `initialize` at once, as bench/startup.py and editors do: by default as Tether's
VS Code extension does (ACP's keys and LSP's: the LSP half at the root); `--client acp` as a
strict ACP v1 client (LSP's half under `_meta`), `--client v2` asking for ACP v2. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# `python -m tether acp`, ended by the process itself the moment the answer is written
EXIT_AT_ANSWER = """
import os, runpy, sys
write = os.write
def answered(fd, data):
    n = write(fd, data)
    if bytes(data[:60]).startswith(b'{"jsonrpc":"2.0","id":1,'):
        os._exit(0)
    return n
os.write = answered
sys.argv = ["tether", "acp", "--provider", "scripted", "--script", os.devnull]
runpy.run_module("tether", run_name="__main__", alter_sys=True)
"""


def message(id_: int, method: str, params: dict[str, object]) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}) + "\n").encode()


class Trees:
    def __init__(self, pythons: list[str], client: str = "hybrid") -> None:
        self.pythons = pythons
        self.scratch = Path(tempfile.mkdtemp(prefix="tether-bench-init-"))
        self.ws = self.scratch / "ws"
        self.ws.mkdir()
        (self.ws / "README.md").write_text("bench\n")
        params: dict[str, object] = {
            "hybrid": {"protocolVersion": 1, "clientCapabilities": {}, "rootUri": self.ws.as_uri(), "capabilities": {}},
            "acp": {"protocolVersion": 1, "clientCapabilities": {}},
            "v2": {"protocolVersion": 2, "capabilities": {}, "info": {"name": "bench", "version": "1"}},
        }[client]
        self.initialize = message(1, "initialize", params)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "PYTHONDONTWRITEBYTECODE"))}
        self.envs = [
            {**base, "TETHER_HOME": str(self.scratch / f"home-{i}"), "TETHER_PROBE_PORTS": "", "PYTHONHASHSEED": "0"}
            for i in range(len(pythons))
        ]

    def warm(self, i: int) -> None:
        """One whole start (`session/new` answered, then a pause): the start caches are saved."""
        argv = [self.pythons[i], "-m", "tether", "acp", "--provider", "scripted", "--script", os.devnull]
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=self.envs[i], cwd=self.ws)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(self.initialize + message(2, "session/new", {"cwd": str(self.ws), "mcpServers": []}))
        proc.stdin.flush()
        while b'"id":2' not in proc.stdout.readline():
            pass
        time.sleep(1.5)
        proc.stdin.close()
        proc.wait(60)

    def instructions(self, i: int) -> int:
        argv = [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
            self.pythons[i],
            "-c",
            EXIT_AT_ANSWER,
        ]
        done = subprocess.run(
            argv, input=self.initialize, capture_output=True, env=self.envs[i], cwd=self.ws, timeout=300
        )
        line = next(x for x in done.stderr.decode().splitlines() if "I   refs:" in x or "I refs:" in x)
        return int(line.split(":")[1].replace(",", "").strip())

    def spawn(self, i: int) -> tuple[float, float]:
        """(spawn -> answer in ms, the process's CPU at the answer in ms)."""
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [self.pythons[i], "-c", EXIT_AT_ANSWER.replace("os._exit(0)", "pass")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=self.envs[i],
            cwd=self.ws,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(self.initialize)
        proc.stdin.flush()
        answer = proc.stdout.readline()
        wall = (time.perf_counter() - t0) * 1000
        tasks = f"/proc/{proc.pid}/task"
        cpu = sum(int(Path(f"{tasks}/{t}/schedstat").read_text().split()[0]) for t in os.listdir(tasks)) / 1e6
        if b'"result"' not in answer:
            raise RuntimeError(f"{self.pythons[i]}: {answer[:300]!r}")
        proc.stdin.close()
        proc.wait(60)
        return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--baseline", action="append", default=[], help="another checkout's python (repeatable)")
    parser.add_argument("--no-valgrind", action="store_true", help="only the timed spawns")
    parser.add_argument("--client", choices=("hybrid", "acp", "v2"), default="hybrid", help="who asks (see above)")
    args = parser.parse_args()
    trees = Trees([*args.baseline, sys.executable], args.client)
    try:
        for i in range(len(trees.pythons)):
            trees.warm(i)
        counted = not args.no_valgrind and shutil.which("valgrind") is not None
        refs = [trees.instructions(i) for i in range(len(trees.pythons))] if counted else []
        samples: list[list[tuple[float, float]]] = [[] for _ in trees.pythons]
        for round_ in range(args.runs):
            order = range(len(trees.pythons)) if round_ % 2 == 0 else reversed(range(len(trees.pythons)))
            for i in order:
                samples[i].append(trees.spawn(i))
        print(f"load average at the end: {os.getloadavg()}")
        print("| tree | instructions to the answer | spawn -> `initialize` | CPU at the answer |")
        print("| --- | --- | --- | --- |")
        for i, python in enumerate(trees.pythons):
            wall = [w for w, _ in samples[i]]
            cpu = [c for _, c in samples[i]]
            count = f"{refs[i] / 1e6:.1f} M" if refs else "-"
            print(
                f"| {python} | {count} | {statistics.median(wall):.1f} ms ({min(wall):.1f}-{max(wall):.1f}) "
                f"| {statistics.median(cpu):.1f} ms ({min(cpu):.1f}-{max(cpu):.1f}) |"
            )
    finally:
        shutil.rmtree(trees.scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
