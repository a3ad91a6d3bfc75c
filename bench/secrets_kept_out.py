"""What keeping secrets out costs (issue 35 item 2).

    python bench/secrets_kept_out.py [--runs 10]

Side by side in one run:
1. Masking a 1 MB tool result (agent/secret_mask.py) beside the input guard's check of the
   same text (what already runs on every tool result): code without secrets, command output
   with 100 secrets in it, and base64-like noise.
2. A command's start in each backend with a home folder of 100, 1,000 and 10,000 entries:
   hiding only Tether's own files (before) and the credential stores too (after). For
   Landlock the rule set is built from the home's entries at every start; `rules` is that
   step alone (landlock_launch._rules), `true` the whole start of `/bin/true`.
Medians in milliseconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "daemon"), str(REPO / "protocol")]

from typing import TYPE_CHECKING, Any

from tether.agent.guard import InputGuard
from tether.agent.secret_mask import mask_secrets
from tether.sandbox import SandboxPolicy, choose_sandbox
from tether.sandbox import landlock_launch as launch
from tether.sandbox.credential_stores import read_limits

if TYPE_CHECKING:
    from collections.abc import Callable


def median_ms(run: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def texts() -> dict[str, str]:
    code = (REPO / "daemon" / "tether" / "agent" / "executor.py").read_text()
    code = (code * (1_000_000 // len(code) + 1))[:1_000_000]
    lines = code.splitlines(keepends=True)
    step = len(lines) // 100
    for i in range(100):
        lines[i * step] = f"export GITHUB_TOKEN=ghp_{'Ab3x' * 9}\n"
    noise = os.urandom(750_000).hex()[:1_000_000]
    return {"code, no secrets": code, "output with 100 secrets": "".join(lines), "hex noise": noise}


def masking(runs: int) -> None:
    guard = InputGuard("warn")
    print("| 1 MB tool result | mask_secrets | input guard (baseline) | masked |\n| --- | --- | --- | --- |")
    for name, text in texts().items():
        masked = mask_secrets(text).count
        print(
            f"| {name} | {median_ms(lambda t=text: mask_secrets(t), runs):.1f} ms | "
            f"{median_ms(lambda t=text: guard.check_tool_result(t, 'run_command'), runs):.1f} ms | {masked} |"
        )


def make_home(root: Path, entries: int) -> Path:
    home = root / f"home-{entries}"
    for sub in (".ssh", ".aws", ".config/gh", ".config/tether", ".local/share/tether", ".mozilla"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    (home / ".npmrc").write_text("registry=https://r.example/\n//r.example/:_authToken=x\n")
    for i in range(entries):
        (home / f"entry-{i}").mkdir() if i % 2 else (home / f"file-{i}").write_text("x")
    return home


def starts(runs: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="tether-bench-secrets-"))
    ws = root / "ws"
    ws.mkdir()
    print(
        "\n| home entries | backend | before: own files only | after: + credential stores | rules alone "
        "before / after |\n| --- | --- | --- | --- | --- |"
    )
    for entries in (100, 1_000, 10_000):
        home = make_home(root, entries)
        own = (str(home / ".config/tether"), str(home / ".local/share/tether"))
        limits = read_limits({"HOME": str(home)})
        stores = (*own, *(h.path for h in limits.hidden), *limits.filtered)
        for backend in ("bwrap", "landlock"):
            sandbox = choose_sandbox(backend).sandbox
            if sandbox is None:
                continue
            timed = []
            for hidden, filtered in ((own, ()), (stores, limits.filtered)):
                policy = SandboxPolicy(str(ws), tmpdir=None, cwd=str(ws), hidden=hidden, filtered=filtered)

                def start(policy: SandboxPolicy = policy, sandbox: Any = sandbox) -> None:
                    argv, fds = sandbox.prepare(["/bin/true"], policy)
                    subprocess.run(argv, pass_fds=fds, check=True)
                    for fd in fds:
                        os.close(fd)

                timed.append(median_ms(start, runs))
            rules = ""
            if backend == "landlock":
                before = median_ms(lambda own=own: launch._rules([str(ws)], list(own), 0), runs)
                after = median_ms(lambda stores=stores: launch._rules([str(ws)], list(stores), 0), runs)
                rules = f"{before:.1f} / {after:.1f} ms"
            print(f"| {entries:,} | {backend} | {timed[0]:.1f} ms | {timed[1]:.1f} ms | {rules} |")
    subprocess.run(["rm", "-rf", str(root)], check=False)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    runs = parser.parse_args().runs
    masking(runs)
    starts(runs)


if __name__ == "__main__":
    main()
