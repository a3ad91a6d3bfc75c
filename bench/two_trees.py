"""One in-process bench run in two checkouts, alternating (issue 32's "side by side in one run").

Owns: `compare(script, measure)`: with `--base DIR`, DIR's interpreter runs this script with
`--one` in DIR (the same measuring code on both trees), then this tree's, for three rounds, and
the medians per tree are printed; without it, this tree's figures alone.
Must not: measure anything itself.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parent.parent


def compare(script: str, doc: str, measure: Callable[[Path], dict[str, float]]) -> None:
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--base", help="another checkout, measured first with its own .venv")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one or not args.base:
        print(json.dumps(measure(Path.cwd() if args.one else ROOT)))  # --one: the tree it runs in
        return
    trees = {"base": Path(args.base).resolve(), "this": ROOT}
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(3):
        for name, tree in trees.items():
            out = subprocess.run(
                [str(tree / ".venv/bin/python"), str(ROOT / "bench" / script), "--one"],
                cwd=tree,
                capture_output=True,
                text=True,
                check=True,
            )
            samples[name].append(json.loads(out.stdout.splitlines()[-1]))
    print(
        json.dumps(
            {name: {key: statistics.median(s[key] for s in runs) for key in runs[0]} for name, runs in samples.items()},
            indent=2,
        )
    )
