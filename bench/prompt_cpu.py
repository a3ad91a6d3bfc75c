"""A warm prompt's own work, in process (issue 32's prompt path; figures in bench/RESULTS.md,
"Issue 32: the prompt path's per-prompt work").

    .venv/bin/python bench/prompt_cpu.py [--base /path/to/other/checkout]

A daemon's server in this process (tests/server/server_harness.py: the real handlers, the
scripted provider's one-line answer, a real history database), five warm-up prompts, then
200 `session/prompt` calls one after another: CPU time per prompt (`time.process_time`: the
event loop and SQLite's thread; the wall clock on a shared machine swings several-fold, CPU
time far less), best of 3 rounds, and the wall time per prompt beside it. With `--base`, the
other checkout's interpreter runs this code first, then this one, alternating for three
rounds; medians of the rounds are printed per tree.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

PROMPTS = 200


async def _per_prompt(root: Path) -> tuple[float, float]:
    sys.path[:0] = [str(root / "tests"), str(root / "tests" / "server")]
    from server_harness import running, settings_for

    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        (workspace / "README.md").write_text("# Sample\n")
        async with running(settings_for(Path(tmp)), workspace) as daemon:
            session = await daemon.new_session(workspace)
            prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]}
            for _ in range(5):
                await daemon.call("session/prompt", prompt)
            rounds = []
            for _ in range(3):
                cpu, wall = time.process_time(), time.perf_counter()
                for _ in range(PROMPTS):
                    await daemon.call("session/prompt", prompt)
                rounds.append(((time.process_time() - cpu) / PROMPTS, (time.perf_counter() - wall) / PROMPTS))
    return min(rounds)


def measure(root: Path) -> dict[str, float]:
    sys.path[:0] = [str(root / "daemon"), str(root / "protocol")]
    cpu, wall = asyncio.run(_per_prompt(root))
    return {"cpu_ms_per_prompt": round(cpu * 1000, 2), "wall_ms_per_prompt": round(wall * 1000, 2)}


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from two_trees import compare

    compare("prompt_cpu.py", __doc__ or "", measure)
