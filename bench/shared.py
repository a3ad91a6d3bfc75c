"""The shared daemon, side by side with a daemon per window, in one run.

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/shared.py [--runs 15] [--clients 5]
        [--sessions 10] [--deltas 2000] [--starts-only] [--out FILE]

1. A window's start: spawn -> `initialize` answered, for `tether acp` (its own daemon, the
   baseline), `tether acp --shared` when no daemon runs yet (the first window: it starts
   the daemon) and when one runs (the second window: a proxy connecting). Every window is
   the command an editor runs (`.venv/bin/tether`), driven over raw stdio (one line out,
   one line in); the second window is also started through pip's generated console-script
   wrapper (what `tether` was before bin/tether) and as `python -m tether`. Rounds sample each target once, in turn; medians with min/max.
   Also: what the proxy imports (modules and time, `-X importtime`) and its RSS.
2. Scale: `--clients` windows of one shared daemon, `--sessions` sessions each, every
   session streaming `--deltas` numbered deltas (scripted provider) at once. Each session's
   text must come back whole and in order (no update lost or reordered); reported: wall
   time, deltas per second, notifications, the daemon's peak RSS (+ the proxies'), and
   the same load on a daemon per window (the baseline: the sum of their peak RSS).
Nothing here is asserted; tests do not time things.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
TETHER = str(Path(sys.executable).parent / "tether")
INIT = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}\n'


def _env(root: Path, runtime: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "OPENAI_", "ANTHROPIC_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        TETHER_HOME=str(root / "home"),
        XDG_CONFIG_HOME=str(root / "cfg"),
        XDG_STATE_HOME=str(root / "state"),
        XDG_RUNTIME_DIR=str(runtime),
        TETHER_PROBE_PORTS="",
    )
    return env


def _script(root: Path, deltas: int) -> Path:
    path = root / "script.json"
    chunks = [f"{i:05d} " for i in range(deltas)]
    path.write_text(json.dumps({"model": "bench", "replies": [{"when": {"user": "stream"}, "chunks": chunks}]}))
    return path


def _vm(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _daemon_pids(runtime: Path) -> list[int]:
    return [int(p.read_text()) for p in (runtime / "tether").glob("*.pid")] if (runtime / "tether").exists() else []


def _kill_daemons(runtime: Path) -> None:
    for pid in _daemon_pids(runtime):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


# ---------------------------------------------------------------------- 1. start


# the floor of any window written in Python: this interpreter (with its venv's site) echoing one line
_FLOOR = [sys.executable, "-c", "import sys; sys.stdout.write(sys.stdin.readline().replace('initialize', 'result'))"]


# pip's generated console-script wrapper (distlib's template), what `tether` was before it
# became bin/tether as it is: it imports `re` before anything of Tether's
_PIP_WRAPPER = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from tether_cli import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""


def _pip_wrapper(root: Path) -> str:
    path = root / "tether-pip-wrapper"
    path.write_text(_PIP_WRAPPER.format(python=sys.executable))
    path.chmod(0o755)
    return str(path)


def _one_start(args: list[str], env: dict[str, str], cwd: Path, command: list[str] | None = None) -> float:
    start = time.perf_counter()
    argv = _FLOOR if args == ["floor"] else [*(command or [TETHER]), *args]
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(INIT)
    proc.stdin.flush()
    line = proc.stdout.readline()
    took = (time.perf_counter() - start) * 1000
    assert b'"result"' in line, line
    proc.stdin.close()
    proc.wait(10)
    return took


def starts(root: Path, script: Path, runs: int) -> dict[str, list[float]]:
    flags = ["--provider", "scripted", "--script", str(script)]
    ws = root / "ws"
    ws.mkdir(exist_ok=True)
    warm_rt = Path(tempfile.mkdtemp(prefix="b21-", dir="/tmp"))
    env_warm = _env(root, warm_rt)
    samples: dict[str, list[float]] = {
        "floor (python echoing a line)": [],
        "own daemon (tether acp)": [],
        "first window (--shared, starts it)": [],
        "second window (--shared, daemon up)": [],
    }
    # the same second window started the other ways, in the same rounds
    others = {
        "second window, pip's generated wrapper (before)": [_pip_wrapper(root)],
        "second window, python -m tether": [sys.executable, "-m", "tether"],
    }
    samples.update({name: [] for name in others})
    _one_start(["acp", *flags], env_warm, ws)  # warm-up: homes, bytecode
    _one_start(["acp", "--shared", *flags], env_warm, ws)
    for command in others.values():
        _one_start(["acp", "--shared", *flags], env_warm, ws, command)
    for _ in range(runs):
        for name, command in others.items():
            samples[name].append(_one_start(["acp", "--shared", *flags], env_warm, ws, command))
        samples["floor (python echoing a line)"].append(_one_start(["floor"], env_warm, ws))
        samples["own daemon (tether acp)"].append(_one_start(["acp", *flags], env_warm, ws))
        cold_rt = Path(tempfile.mkdtemp(prefix="b21-", dir="/tmp"))
        samples["first window (--shared, starts it)"].append(
            _one_start(["acp", "--shared", *flags], _env(root, cold_rt), ws)
        )
        _kill_daemons(cold_rt)
        samples["second window (--shared, daemon up)"].append(_one_start(["acp", "--shared", *flags], env_warm, ws))
    _kill_daemons(warm_rt)
    return samples


def proxy_imports() -> dict[str, float]:
    code = "import sys; b=set(sys.modules); import tether_cli, tether.shared.proxy; print(len(set(sys.modules)-b))"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    count = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env).stdout)
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import tether_cli, tether.shared.proxy"],
        capture_output=True,
        text=True,
        env=env,
    )
    ours = 0
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[2].strip() in ("tether_cli", "tether.shared.proxy"):
            ours += int(parts[1])
    return {"modules imported": count, "import ms (tether_cli + proxy, cumulative)": ours / 1000}


# ---------------------------------------------------------------------- 2. scale


async def _scale(root: Path, script: Path, clients: int, sessions: int, deltas: int, shared: bool) -> dict[str, float]:
    from daemon_harness import text_of
    from tether_client import TetherClient

    runtime = Path(tempfile.mkdtemp(prefix="b21-", dir="/tmp"))
    env = _env(root, runtime)
    ws = root / "ws"
    args = ["acp", *(["--shared"] if shared else []), "--provider", "scripted", "--script", str(script)]
    windows = [
        await TetherClient.spawn(command=[TETHER, *args], env=env, cwd=ws, framing="ndjson", stderr=subprocess.DEVNULL)
        for _ in range(clients)
    ]
    for window in windows:
        await window.initialize()
    opened = [await window.new_session(ws) for window in windows for _ in range(sessions)]
    expected = "".join(f"{i:05d} " for i in range(deltas))
    turns = [session.prompt("stream") for session in opened]
    start = time.perf_counter()
    await asyncio.gather(*(turn.wait() for turn in turns))
    wall = time.perf_counter() - start
    whole = sum(text_of(turn.updates) == expected for turn in turns)
    notes = sum(len(turn.updates) for turn in turns)
    daemons = _daemon_pids(runtime) if shared else [w.process.pid for w in windows]
    rss = sum(_vm(pid, "VmHWM") for pid in daemons) / 1024
    proxies = sum(_vm(w.process.pid, "VmRSS") for w in windows) / 1024 if shared else 0.0
    for window in windows:
        await window.close()
    _kill_daemons(runtime)
    return {
        "sessions whole and in order": whole,
        "sessions": len(turns),
        "wall s": wall,
        "deltas/s": len(turns) * deltas / wall,
        "notifications": notes,
        "daemon peak RSS MB (sum)": rss,
        "proxies RSS MB (sum)": proxies,
    }


def _row(name: str, values: list[float]) -> str:
    return f"| {name} | {statistics.median(values):.1f} | {min(values):.1f} | {max(values):.1f} |"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--clients", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--deltas", type=int, default=2000)
    parser.add_argument("--out")
    parser.add_argument("--starts-only", action="store_true", help="only 1. (a window's start)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-shared-"))
    script = _script(root, args.deltas)
    lines = [
        f"spawn -> initialize answered, ms ({args.runs} rounds)",
        "",
        "| window | median | min | max |",
        "| --- | --- | --- | --- |",
    ]
    measured = starts(root, script, args.runs)
    lines += [_row(name, values) for name, values in measured.items()]
    base = statistics.median(measured["own daemon (tether acp)"])
    second = statistics.median(measured["second window (--shared, daemon up)"])
    floor = statistics.median(measured["floor (python echoing a line)"])
    lines.append(f"\nsecond window / own daemon: {second / base:.2f}; second window / floor: {second / floor:.2f}")
    before = statistics.median(measured["second window, pip's generated wrapper (before)"])
    lines.append(
        f"second window / pip's wrapper (before): {second / before:.2f}; pip's wrapper / floor: {before / floor:.2f}"
    )
    lines.append(f"proxy: {proxy_imports()}")
    for shared in () if args.starts_only else (True, False):
        result = asyncio.run(_scale(root, script, args.clients, args.sessions, args.deltas, shared))
        name = "one shared daemon" if shared else "a daemon per window (baseline)"
        lines.append(
            f"\nscale, {name}: "
            + ", ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in result.items())
        )
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
