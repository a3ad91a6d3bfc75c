"""Start-up, side by side in one run: Tether's daemon in both framings and Codex's app-server.

    .venv/bin/python bench/startup.py [--runs 15] [--codex PATH] [--baseline PYTHON ...] [--targets a,b,...]
        [--pause-before-prompt S] [--out FILE]

PATH (or the env var TETHER_BENCH_CODEX) is Codex's native binary or an npm prefix where
`npm install --prefix PATH @openai/codex` put it; without it Codex is "not installed".

Every sample is a fresh process, driven through `tether_client`'s JSON-RPC peer
(bench/spawned.py), against one fake model server on 127.0.0.1 (bench/fake_model.py; a
reply of 8 deltas of 4 characters). Codex runs with every other host behind a dead proxy
(it tries to sync plugins from GitHub at start); Tether runs with no proxy settings (it
makes no request but the model's, which must reach 127.0.0.1 directly):

1. app-servers: spawn -> `initialize` answered; spawn -> first `session/new` answered
   (Codex: `thread/start`); a "hi" turn (prompt sent -> answered; Codex: `turn/start` ->
   `turn/completed`); the process's CPU when `session/new` is answered (user+sys from
   /proc, 10 ms ticks: what load on the machine does not stretch); its total CPU (user+sys from spawn to exit, after stdin
   is closed, reaped descendants included) and its peak RSS after the turn.
2. one-shot commands: `tether run "hi"` (scripted provider, and openai provider against
   the fake server; one process: it serves its daemon itself, `tether_cli.inprocess`) and
   `codex exec "hi"`: wall time spawn -> exit and CPU (user+sys, descendants included).

The "hi" prompt is sent the instant `session/new` is answered (a script, `tether run`, an
editor sending a queued prompt): "spawn -> first character" is the cold path to the
first token. `--pause-before-prompt S` sends Tether's prompt S seconds later instead
(the warm-up has run: the "hi" turn is then the warm first prompt).

`--baseline PYTHON`: the interpreter of another checkout's venv (say main's, before a
change); every Tether target is also sampled with it, right before the same target of this
checkout, in the same rounds (rows `base-...`; its packages are byte-compiled first too).

Each target gets one unrecorded warm-up spawn (homes and databases created), then
`--runs` rounds in which every target is sampled once, in turn, so load from the rest of
the machine falls on all of them alike. Medians are reported with min and max.
Nothing here is asserted; tests do not time things.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from codex_side import (  # noqa: E402
    codex_env,
    codex_exec_argv,
    codex_sample,
    codex_version,
    resolve_codex,
    write_codex_home,
)
from fake_model import FakeModel  # noqa: E402
from spawned import children_cpu_s  # noqa: E402
from tether_side import compile_packages, tether_argv, tether_env, tether_sample  # noqa: E402

from tether_protocol import Framing  # noqa: E402

Sample = Callable[[], Awaitable[dict[str, float]]]
REPLY_DELTAS = 8
SAMPLE_TIMEOUT_S = 120.0  # a sample that hangs (a server that never answers) fails the run
SERVERS = ["tether-serve-openai", "tether-acp-openai", "tether-serve-scripted", "tether-acp-scripted", "codex-app-server"]
ONESHOTS = ["bare-python", "tether-run-scripted", "tether-run-openai", "codex-exec"]
BARE_START = "import asyncio, sqlite3, json, ssl"  # issue 31's yardstick: a bare interpreter's start
LABELS = {
    "tether-serve-openai": "`tether serve` (LSP framing), openai provider -> fake server",
    "tether-acp-openai": "`tether acp` (NDJSON), openai provider -> fake server",
    "tether-serve-scripted": "`tether serve` (LSP framing), scripted provider",
    "tether-acp-scripted": "`tether acp` (NDJSON), scripted provider",
    "codex-app-server": "`codex app-server` (NDJSON) -> fake server",
    "tether-run-scripted": '`tether run "hi" --provider scripted --script <one reply>`',
    "tether-run-openai": '`tether run "hi" --provider openai` -> fake server',
    "codex-exec": '`codex exec "hi"` -> fake server',
    "bare-python": f'bare start: `python -c "{BARE_START}"`',
}


class Setup:
    """The scratch directory, the fake server and the environments of one run."""

    def __init__(self, codex: Path | None, baselines: list[str] | None = None, pause_s: float = 0.0) -> None:
        self.baselines = baselines or []
        self.pause_s = pause_s
        for baseline in self.baselines:
            compile_packages(baseline)
        self.scratch = Path(tempfile.mkdtemp(prefix="tether-bench-startup-"))
        self.ws = self.scratch / "ws"
        self.ws.mkdir()
        (self.ws / "README.md").write_text("bench\n")
        self.script = self.scratch / "hi.json"
        self.script.write_text(json.dumps({"replies": [{"text": "abcd" * REPLY_DELTAS}]}))
        self.model = FakeModel(REPLY_DELTAS, max_requests=100_000)
        base = dict(os.environ)
        self.tether_env = tether_env(base, self.scratch / "tether-home")
        self.codex = codex
        # outside /tmp: Codex declines to set up its helper binaries under a temporary dir
        self.codex_home = Path.home() / ".cache" / "tether-bench" / f"codex-home-{os.getpid()}"
        self.codex_env = codex_env(base, self.codex_home)
        self.codex_log = self.scratch / "codex-stderr.log"
        if codex is not None:
            write_codex_home(self.codex_home, self.model.url)

    def close(self) -> None:
        self.model.close()
        shutil.rmtree(self.codex_home, ignore_errors=True)


def server_samplers(s: Setup, names: list[str]) -> dict[str, Sample]:
    url = s.model.url
    out: dict[str, Sample] = {}
    for name in names:
        if name == "codex-app-server":
            if s.codex is not None:
                out[name] = partial(codex_sample, s.codex, s.codex_env, s.ws)
            continue
        _, command, provider = name.split("-")
        framing: Framing = "lsp" if command == "serve" else "ndjson"
        for prefix, python in pythons(s):
            argv = tether_argv(command, provider, script=s.script, model_url=url, python=python)
            out[prefix + name] = partial(tether_sample, argv, framing, env_for(s, prefix), s.ws, s.pause_s)
    return out


def pythons(s: Setup) -> list[tuple[str, str]]:
    """(name prefix, interpreter) of each Tether sampled: the baselines' first (`base-`,
    `base2-`, ...), then this one."""
    return [(_prefix(i), python) for i, python in enumerate(s.baselines)] + [("", sys.executable)]


def _prefix(index: int) -> str:
    return f"base{index + 1 if index else ''}-"


def env_for(s: Setup, prefix: str) -> dict[str, str]:
    """Each tree its own Tether home, so each has its own class code cache (a shared one is
    rewritten by whichever tree ran last, and the other then misses its entries)."""
    return s.tether_env if not prefix else {**s.tether_env, "TETHER_HOME": str(s.scratch / f"tether-home-{prefix[:-1]}")}


def label(name: str) -> str:
    prefix, _, rest = name.partition("-")
    if not prefix.startswith("base") or rest not in LABELS:
        return LABELS[name]
    return f"{LABELS[rest]}, **baseline{prefix[4:] and ' ' + prefix[4:]}**"


async def oneshot(argv: list[str], env: dict[str, str], cwd: Path, expect: bytes = b"abcd" * REPLY_DELTAS,
                  ) -> dict[str, float]:
    """Wall time spawn -> exit and CPU of one command; its output must hold `expect` (the reply)."""
    before = children_cpu_s()
    t0 = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.DEVNULL, env=env, cwd=cwd)
    out, _ = await proc.communicate()
    wall_ms = (time.perf_counter() - t0) * 1000
    cpu = children_cpu_s() - before
    if proc.returncode != 0 or expect not in out:
        raise RuntimeError(f"{argv[:4]} exited {proc.returncode}: {out[-400:]!r}")
    return {"wall_ms": wall_ms, "cpu_s": cpu}


def oneshot_samplers(s: Setup, names: list[str]) -> dict[str, Sample]:
    out: dict[str, Sample] = {}
    ws = ["--workspace", str(s.ws)]
    commands: dict[str, tuple[list[str], dict[str, str]]] = {}
    for prefix, python in pythons(s):
        commands[prefix + "tether-run-scripted"] = (
            tether_argv("run", "scripted", script=s.script, python=python) + ws + ["hi"], env_for(s, prefix))
        commands[prefix + "tether-run-openai"] = (
            tether_argv("run", "openai", model_url=s.model.url, python=python) + ws + ["hi"], env_for(s, prefix))
    if s.codex is not None:
        commands["codex-exec"] = (codex_exec_argv(s.codex), s.codex_env)
    for name in names:
        for twin in [prefix + name for prefix, _ in pythons(s)]:
            if twin in commands:
                argv, env = commands[twin]
                out[twin] = partial(oneshot, argv, env, s.ws)
    if "bare-python" in names:
        out["bare-python"] = partial(oneshot, [sys.executable, "-c", BARE_START], s.tether_env, s.ws, b"")
    return out


def spread(values: list[float]) -> dict[str, Any]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "all": [round(v, 4) for v in values]}


async def measure(samplers: dict[str, Sample], runs: int) -> dict[str, dict[str, Any]]:
    """One warm-up per target, then `runs` rounds of one sample per target."""
    for sample in samplers.values():
        await asyncio.wait_for(sample(), SAMPLE_TIMEOUT_S)
    got: dict[str, list[dict[str, float]]] = {name: [] for name in samplers}
    for _ in range(runs):
        for name, sample in samplers.items():
            got[name].append(await asyncio.wait_for(sample(), SAMPLE_TIMEOUT_S))
    return {name: {key: spread([r[key] for r in rows]) for key in rows[0]} for name, rows in got.items()}


def machine(codex: Path | None, baseline: list[str] | None) -> dict[str, Any]:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "?")
    commit = subprocess.run(["git", "-C", str(BENCH), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpus": os.cpu_count(), "cpu": cpu,
            "kernel": platform.release(), "python": platform.python_version(), "tether_commit": commit,
            "loadavg_at_start": os.getloadavg(), "baseline": baseline,
            "codex": f"{codex_version(codex)} ({codex})" if codex is not None else "not installed"}


def fmt(stat: dict[str, Any], key: str) -> str:
    scale, unit = (1000.0, "ms") if key.endswith("cpu_s") else (1.0, "MB" if key == "rss_mb" else "ms")
    s = {k: stat[k] * scale for k in ("median", "min", "max")}
    return f"**{s['median']:.0f} {unit}** ({s['min']:.0f}–{s['max']:.0f})"


def table(results: dict[str, Any], missing: list[str]) -> str:
    """The markdown tables of bench/RESULTS.md; `missing` are the wanted Codex targets it lacks."""
    lines = ["| target | spawn -> `initialize` | spawn -> `session/new` | CPU at `session/new` | \"hi\" turn"
             " | spawn -> first character | process CPU | peak RSS |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, stats in results["servers"].items():
        keys = ("init_ms", "new_ms", "new_cpu_s", "turn_ms", "first_ms", "cpu_s", "rss_mb")
        lines.append(f"| {label(name)} | " + " | ".join(fmt(stats[k], k) for k in keys) + " |")
    if "codex-app-server" in missing:
        lines.append(f"| {LABELS['codex-app-server']} | not installed | | | | | | |")
    lines += ["", "| command | wall | CPU (user+sys) |", "| --- | --- | --- |"]
    for name, stats in results["oneshots"].items():
        lines.append(f"| {label(name)} | {fmt(stats['wall_ms'], 'wall_ms')} | {fmt(stats['cpu_s'], 'cpu_s')} |")
    if "codex-exec" in missing:
        lines.append(f"| {LABELS['codex-exec']} | not installed | |")
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    codex = resolve_codex(args.codex)
    wanted = args.targets.split(",") if args.targets else SERVERS + ONESHOTS
    s = Setup(codex, args.baseline, args.pause_before_prompt)
    try:
        with_codex = [n for n in ("codex-app-server", "codex-exec") if n in wanted]
        if codex is not None and with_codex:  # one spawn with its stderr kept, to see what it tried
            logged = codex_sample(codex, dict(s.codex_env, RUST_LOG="warn"), s.ws, s.codex_log)
            await asyncio.wait_for(logged, SAMPLE_TIMEOUT_S)
        results: dict[str, Any] = {"machine": machine(codex, args.baseline), "runs": args.runs}
        results["servers"] = await measure(server_samplers(s, [n for n in SERVERS if n in wanted]), args.runs)
        results["oneshots"] = await measure(oneshot_samplers(s, [n for n in ONESHOTS if n in wanted]), args.runs)
        paths: dict[str, int] = {}
        for seen in s.model.drain():
            paths[seen["path"]] = paths.get(seen["path"], 0) + 1
        results["fake_server_requests"] = paths
        results["machine"]["loadavg_at_end"] = os.getloadavg()
        results["codex_stderr_log"] = str(s.codex_log) if codex is not None else None
        results["table"] = table(results, with_codex if codex is None else [])
        return results
    finally:
        s.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--codex", help="codex binary or npm prefix (default: $TETHER_BENCH_CODEX)")
    parser.add_argument("--baseline", action="append", help="another checkout's python, sampled beside this one "
                        "(rows base-...; given again: rows base2-, ...)")
    parser.add_argument("--targets", help="comma-separated subset of: " + ",".join(SERVERS + ONESHOTS))
    parser.add_argument("--pause-before-prompt", type=float, default=0.0, metavar="S",
                        help="Tether's prompt waits S seconds after session/new (the warm first prompt)")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    results = asyncio.run(run(args))
    text = json.dumps(results, indent=2)
    if args.out is not None:
        args.out.write_text(text + "\n")
    print(text)
    print("\n" + results["table"])


if __name__ == "__main__":
    main()
