"""What putting back autorun paths costs a command run without asking.

    python bench/autorun_guard.py [--runs 40]

Side by side in one run, alternating: `true` through `run_command` in bubblewrap without
the guard (the baseline) and with it (`ctx.guard_autoruns`: the top-level autorun paths
read before and compared after), in a workspace with none of them, and in one with a
typical `.vscode/` (4 files), `.envrc` and an `.idea/` of 60 files. Then the guard's own
work (take + restore, nothing changed) alone. Medians and 90th percentiles in ms.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "daemon"), str(REPO / "protocol"), str(REPO / "bench")]

from sandbox import summary

from tether.sandbox import choose_sandbox
from tether.tools.autorun_guard import AutorunSnapshot
from tether.tools.base import ToolContext
from tether.tools.run_command import RunCommandTool
from tether.tools.sandbox import WorkspaceSandbox


def _fill(ws: Path) -> None:
    (ws / ".vscode").mkdir()
    for name in ("settings.json", "tasks.json", "launch.json", "extensions.json"):
        (ws / ".vscode" / name).write_text('{"x": 1}\n' * 20)
    (ws / ".envrc").write_text("use flake\n")
    for i in range(60):
        folder = ws / ".idea" / f"part{i % 6}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i}.xml").write_text("<component/>\n" * 40)


async def _runs(ws: Path, runs: int) -> dict[str, list[float]]:
    choice = choose_sandbox("bwrap")
    tool = RunCommandTool()
    times: dict[str, list[float]] = {"off": [], "on": []}
    # the order flips each round: the run right after another pays for its clean-up
    for guard in [g for i in range(runs + 1) for g in (("off", "on"), ("on", "off"))[i % 2]]:
        ctx = ToolContext(sandbox=WorkspaceSandbox(ws), command_sandbox=choice, guard_autoruns=guard == "on")
        t0 = time.perf_counter()
        await tool.call({"command": "true"}, ctx)
        times[guard].append((time.perf_counter() - t0) * 1000)
    return {k: v[1:] for k, v in times.items()}  # the first of each warms up


def _guard_alone(ws: Path, runs: int) -> list[float]:
    out = []
    for _ in range(runs * 5):
        t0 = time.perf_counter()
        AutorunSnapshot.take(str(ws)).restore()
        out.append((time.perf_counter() - t0) * 1000)
    return out


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    runs = parser.parse_args().runs
    print("| workspace | `true` in bwrap, no guard | with the guard | the guard alone |")
    print("| --- | --- | --- | --- |")
    for label, filled in (("no autorun paths", False), (".vscode/ (4), .envrc, .idea/ (60 files)", True)):
        with tempfile.TemporaryDirectory(dir="/var/tmp") as root:
            ws = Path(root)
            if filled:
                _fill(ws)
            times = await _runs(ws, runs)
            alone = _guard_alone(ws, runs)
            print(f"| {label} | {summary(times['off'])} | {summary(times['on'])} | {summary(alone, 3)} |")


if __name__ == "__main__":
    asyncio.run(main())
