"""What command safety costs: the OS sandbox per command, and the shell analysis per approval.

    python bench/sandbox.py [--runs 50]

Side by side in one run: the same commands through `run_command` with no sandbox (the
baseline), in bubblewrap and through the Landlock launcher; and the bare spawn of
`/bin/sh -c true` with no tool around it (the floor). Then the approval side: parsing a
command with tree-sitter-bash (the first parse pays the import) and a whole gate
decision. Medians and 90th percentiles in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "daemon"), str(REPO / "protocol")]

from tether.sandbox import choose_sandbox  # noqa: E402
from tether.tools.base import ToolContext  # noqa: E402
from tether.tools.run_command import RunCommandTool  # noqa: E402
from tether.tools.sandbox import WorkspaceSandbox  # noqa: E402

COMMANDS = {
    "true": "true",
    "git status": "git init -q . 2>/dev/null; git status --short",
    "python3 -c": "python3 -c 'print(1)'",
}


def summary(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return f"{statistics.median(ordered):7.1f} / {p90:7.1f}"


async def tool_runs(ctx: ToolContext, command: str, runs: int) -> list[float]:
    tool = RunCommandTool()
    await tool.call({"command": command}, ctx)  # warm: the backend probe, page cache
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        await tool.call({"command": command}, ctx)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def bare_runs(runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(["/bin/sh", "-c", "true"], check=True)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def analysis(runs: int) -> list[tuple[str, str]]:
    t0 = time.perf_counter()
    from tether.approvals.commands import parse_command

    parse_command("ls")
    first = (time.perf_counter() - t0) * 1000
    rows = [("first parse, including the tree-sitter import", f"{first:7.1f}")]
    samples = {
        "`npm test && git status | head`": "npm test && git status | head",
        "`for f in *.py; do bash -lc \"rm -rf $f\"; done`": 'for f in *.py; do bash -lc "rm -rf $f"; done',
        "a 6,000-character command": "echo " + " ".join(["word"] * 1200),
    }
    for label, command in samples.items():
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            parse_command(command)
            times.append((time.perf_counter() - t) * 1000)
        rows.append((f"parse {label}", summary(times)))
    return rows


async def main(runs: int) -> None:
    print(f"{runs} runs each; median / p90 in ms\n")
    print("| command | bare `sh -c` | run_command, no sandbox | bubblewrap | Landlock |")
    print("| --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as root:
        ws = Path(root) / "ws"
        ws.mkdir()
        base = ToolContext(sandbox=WorkspaceSandbox(ws))
        contexts = {name: replace(base, command_sandbox=choose_sandbox(name)) for name in ("off", "bwrap", "landlock")}
        for name, ctx in contexts.items():
            if name != "off" and ctx.command_sandbox.sandbox is None:
                sys.exit(f"{name} is unavailable here: {ctx.command_sandbox.reason}")
        bare = summary(bare_runs(runs))
        for label, command in COMMANDS.items():
            cells = [summary(await tool_runs(contexts[name], command, runs)) for name in contexts]
            print(f"| `{label}` | {bare if label == 'true' else '—'} | " + " | ".join(cells) + " |")
    print("\n| approval side | ms |\n| --- | --- |")
    for label, value in analysis(runs):
        print(f"| {label} | {value} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    asyncio.run(main(parser.parse_args().runs))
