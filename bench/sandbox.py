"""What command safety costs: the OS sandbox per command, and the shell analysis per approval.

    python bench/sandbox.py [--runs 50]
    python bench/sandbox.py --approvals-only [--base DIR] [--runs 200]

Side by side in one run: the same commands through `run_command` with no sandbox (the
baseline), in bubblewrap and through the Landlock launcher; and the bare spawn of
`/bin/sh -c true` with no tool around it (the floor). Then the approval side: parsing a
command with tree-sitter-bash (the first parse pays the import) and a whole gate
decision under allow rules, over a real workspace. `--approvals-only` measures only the
approval side; with `--base DIR` (another source tree, e.g. main's) it is measured for
both trees in alternating subprocesses, so the two columns share the machine's load.
Medians and 90th percentiles in milliseconds.
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
# `--tree DIR`: measure that source tree's approvals (the `--base` side runs this way)
TREE = Path(sys.argv[sys.argv.index("--tree") + 1]) if "--tree" in sys.argv else REPO
sys.path[:0] = [str(TREE / "daemon"), str(TREE / "protocol")]

from tether.sandbox import choose_sandbox
from tether.tools.base import ToolContext
from tether.tools.run_command import RunCommandTool
from tether.tools.sandbox import WorkspaceSandbox

COMMANDS = {
    "true": "true",
    "git status": "git init -q . 2>/dev/null; git status --short",
    "python3 -c": "python3 -c 'print(1)'",
}


def summary(samples: list[float], digits: int = 1) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return f"{statistics.median(ordered):.{digits}f} / {p90:.{digits}f}"


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
        '`for f in *.py; do bash -lc "rm -rf $f"; done`': 'for f in *.py; do bash -lc "rm -rf $f"; done',
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


# (label, command) a gate decides with allow rules on `echo`, `ls` and `git`
DECISIONS = {
    "decide `git log --oneline -n 5` (allowed by a rule)": "git log --oneline -n 5",
    "decide `ls -la > listing.txt 2>&1` (a write checked on disk)": "ls -la > listing.txt 2>&1",
    "decide `echo x > Makefile` (asked)": "echo x > Makefile",
    "decide `git ls-remote --upload-pack='touch M' .` (asked)": "git ls-remote --upload-pack='touch M' .",
}


async def decisions(runs: int) -> list[tuple[str, str]]:
    import inspect

    from tether.approvals import ApprovalGate, ApprovalRequest, AskerAnswer
    from tether.store import HistoryStore

    class Rejects:
        async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
            return AskerAnswer("reject_once")

    rows = []
    with tempfile.TemporaryDirectory(dir="/var/tmp") as root:
        ws = Path(root) / "ws"
        ws.mkdir()
        (ws / "Makefile").write_text("test:\n\ttrue\n")
        store = await HistoryStore.open(Path(root) / "h.sqlite3")
        known = inspect.signature(ApprovalGate).parameters
        gate = ApprovalGate(store.rules, **({"workspace": ws} if "workspace" in known else {}))  # type: ignore[arg-type]
        for prefix in ("echo", "ls", "git"):
            await gate.add_rule("execute", prefix, "allow")
        for label, command in DECISIONS.items():
            request = ApprovalRequest(
                "s",
                "c",
                "run_command",
                "execute",
                command,
                {"command": command},
                "ask",
                command=command,
                cwd=".",
                sandboxed=True,
            )
            await gate.decide(request, Rejects())  # warm
            times = []
            for _ in range(runs):
                t = time.perf_counter()
                await gate.decide(request, Rejects())
                times.append((time.perf_counter() - t) * 1000)
            rows.append((label, summary(times, 3)))
        await store.close()
    return rows


def side_by_side(base: Path, runs: int, rounds: int = 3) -> None:
    """The approval side of this tree and of `base`, in alternating subprocesses."""
    import json

    columns: dict[str, dict[str, list[str]]] = {"this tree": {}, "base": {}}
    for _ in range(rounds):
        for name, tree in (("this tree", REPO), ("base", base)):
            out = subprocess.run(
                [sys.executable, __file__, "--approvals-only", "--json", "--runs", str(runs), "--tree", str(tree)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            for label, value in json.loads(out):
                columns[name].setdefault(label, []).append(value)
    print(f"{runs} runs per round, {rounds} rounds alternating; median / p90 in ms per round\n")
    print(f"| approval side | this tree | base ({base}) |\n| --- | --- | --- |")
    for label in columns["this tree"]:
        cells = ["<br>".join(columns[name].get(label, ["—"])) for name in columns]
        print(f"| {label} | " + " | ".join(cells) + " |")


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
    for label, value in analysis(runs) + await decisions(runs):
        print(f"| {label} | {value} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--approvals-only", action="store_true", help="only the approval side")
    parser.add_argument("--base", type=Path, help="another source tree, measured alongside (approvals only)")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--tree", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.base is not None:
        side_by_side(args.base, args.runs)
    elif args.approvals_only:
        rows = analysis(args.runs) + asyncio.run(decisions(args.runs))
        if args.json:
            import json

            print(json.dumps(rows))
        else:
            for label, value in rows:
                print(f"| {label} | {value} |")
    else:
        asyncio.run(main(args.runs))
