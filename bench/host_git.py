"""What Tether's own git reads cost (issue 30): the change scan after a command that changed
tracked clean files (their earlier content read from git), and `/review`'s diffs.

    python bench/host_git.py --base /work/main [--rounds 6] [--runs 15]

Side by side in one run: each round starts one child process per tree (this one and
`--base`), alternating, so both see the same machine load. A child builds a repository of
200 tracked files (4 KiB each), then per sample: the scan before, a change to 5 tracked
files, the scan after (timed: this is where git's copies are read), the files put back
clean. `/review` is timed once per round (its git diff on that repository, 5 files
changed). Medians and 90th percentiles in milliseconds over all rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
FILES, CHANGED, SIZE = 200, 5, 4096


def _repository(root: Path) -> list[Path]:
    paths = [root / f"src/m{i:03d}.txt" for i in range(FILES)]
    for i, path in enumerate(paths):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text((f"line {i} " * (SIZE // 10))[:SIZE])
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@b"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=root, check=True)
    _age(paths)
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=root, check=False)
    return paths


def _age(paths: list[Path]) -> None:
    old = 1_700_000_000  # older than the index: clean, not "racily" so
    for path in paths:
        os.utime(path, (old, old))


def _scan_samples(root: Path, paths: list[Path], runs: int) -> list[float]:
    from tether.tools.changes import ChangeRecorder, KnownFiles
    from tether.tools.sandbox import WorkspaceSandbox

    sandbox, samples = WorkspaceSandbox(root), []
    originals = {path: path.read_bytes() for path in paths[:CHANGED]}
    for _ in range(runs + 1):
        recorder = ChangeRecorder(sandbox, KnownFiles())
        before = recorder.scan_before()
        assert len(before.git) == FILES, f"{len(before.git)} of the tracked files are clean in the index"
        for path in originals:
            path.write_bytes(originals[path] + b"changed\n")
        started = time.perf_counter()
        recorder.scan_after(before)
        samples.append((time.perf_counter() - started) * 1000)
        assert all(c.note is None for c in recorder.changes.values()), "a change was not recorded"
        for path, data in originals.items():
            path.write_bytes(data)
        _age(list(originals))
    return samples[1:]  # the first pays imports and the page cache


async def _review_ms(root: Path) -> float:
    for path in sorted(root.glob("src/*.txt"))[:CHANGED]:
        path.write_text(path.read_text() + "changed\n")
    started = time.perf_counter()
    try:
        from tether.sandbox import choose_sandbox
        from tether.tools.host_git import HostGit, diff_args

        git = HostGit(str(root), choose_sandbox("auto"))
        out = await git.run(*diff_args()) + await git.run(*diff_args("--cached"))
    except ImportError:  # the base tree: git on the host with its "safe" flags
        from tether.services import commands

        safe = await commands._no_filters(str(root))  # type: ignore[attr-defined]
        out = (
            await commands._git(str(root), *safe, "diff", *commands._SAFE_DIFF)  # type: ignore[attr-defined]
            + await commands._git(str(root), *safe, "diff", "--cached", *commands._SAFE_DIFF)
        )  # type: ignore[attr-defined]
    assert out.count("diff --git") == CHANGED, out[:400]
    return (time.perf_counter() - started) * 1000


def child(tree: Path, runs: int) -> None:
    sys.path[:0] = [str(tree / "daemon"), str(tree / "protocol")]
    with tempfile.TemporaryDirectory(dir="/var/tmp") as root:
        paths = _repository(Path(root))
        scans = _scan_samples(Path(root), paths, runs)
        review = asyncio.run(_review_ms(Path(root)))
    print(json.dumps({"scan": scans, "review": review}))


def _summary(samples: list[float]) -> str:
    ordered = sorted(samples)
    return f"{statistics.median(ordered):6.2f} / {ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]:6.2f}"


def main(base: Path, rounds: int, runs: int) -> None:
    trees = {"base": base.resolve(), "this tree": HERE}
    found: dict[str, dict[str, list[float]]] = {name: {"scan": [], "review": []} for name in trees}
    for _ in range(rounds):
        for name, tree in trees.items():
            done = subprocess.run(
                [sys.executable, __file__, "--child", str(tree), "--runs", str(runs)],
                capture_output=True,
                text=True,
                check=True,
            )
            sample = json.loads(done.stdout)
            found[name]["scan"] += sample["scan"]
            found[name]["review"].append(sample["review"])
    print(f"{rounds} rounds x {runs} scans; median / p90 in ms\n")
    print(f"| | {' | '.join(f'{name} ({tree})' for name, tree in trees.items())} |\n| --- | --- | --- |")
    print(
        f"| scan after a command that changed {CHANGED} of {FILES} tracked files | "
        + " | ".join(_summary(found[name]["scan"]) for name in trees)
        + " |"
    )
    print("| `/review`'s two git diffs | " + " | ".join(_summary(found[name]["review"]) for name in trees) + " |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, default=Path("/work/main"))
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--child", type=Path)
    options = parser.parse_args()
    if options.child is not None:
        child(options.child, options.runs)
    else:
        main(options.base, options.rounds, options.runs)
