"""What a command's bubblewrap start costs with the command line each tree builds.

    python bench/bwrap_line.py --base OTHER_TREE [--runs 400]

Each tree (this one and `--base`) builds its bubblewrap line for the same workspace (a git
repository with `.tether/`; Tether's own folders hidden, as a command sees them), in a child
process using that tree's code; then both lines run `/bin/true`, interleaved, and the
medians are printed. `bench/sandbox.py` times whole `run_command` calls per tree, one tree
after the other, where the machine's drift between rounds is larger than the difference.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_BUILD = """
import json, sys, tempfile
sys.path[:0] = [sys.argv[1] + "/daemon", sys.argv[1] + "/protocol"]
from tether.sandbox import SandboxPolicy, choose_sandbox
from tether.services.registry import private_paths
ws = sys.argv[2]
policy = SandboxPolicy(workspace=ws, tmpdir=tempfile.mkdtemp(prefix="bwrap-line-"), cwd=ws, hidden=private_paths(None))
print(json.dumps(choose_sandbox("bwrap").sandbox.wrap(["/bin/true"], policy)))
"""


def _workspace() -> str:
    ws = Path(tempfile.mkdtemp(prefix="bwrap-line-ws-"))
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / ".tether").mkdir()
    (ws / "a.txt").write_text("x\n")
    return str(ws)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=400)
    args = parser.parse_args()
    ws = _workspace()
    lines = {
        name: json.loads(
            subprocess.run(
                [sys.executable, "-c", _BUILD, str(tree), ws], check=True, capture_output=True, text=True
            ).stdout
        )
        for name, tree in (("base", args.base.resolve()), ("this tree", REPO))
    }
    times: dict[str, list[float]] = {name: [] for name in lines}
    order = list(lines)
    for i in range(args.runs):
        for name in order if i % 2 == 0 else reversed(order):
            started = time.perf_counter()
            subprocess.run(lines[name], stdin=subprocess.DEVNULL, check=True)
            times[name].append((time.perf_counter() - started) * 1000)
    for name, taken in times.items():
        taken.sort()
        print(
            f"{name}: {len(lines[name])} words, median {statistics.median(taken):.2f} ms, "
            f"p10 {taken[len(taken) // 10]:.2f}, p90 {taken[len(taken) * 9 // 10]:.2f}"
        )
    print(f"ratio of medians: {statistics.median(times['this tree']) / statistics.median(times['base']):.3f}")


if __name__ == "__main__":
    main()
