"""`tether chat` start-up, side by side in one run: to its input prompt, and to "ready"
(its daemon up and a session open), against the baselines measured the same way.

    .venv/bin/python bench/chat_startup.py [--runs 9]

Each sample is a fresh 80x24 tmux server (Debian's tmux) running one command; the clock
runs from `respawn-pane` to the marker on the screen, read with `capture-pane` in a tight
loop (each read costs ~2-3 ms: that is the resolution). Targets, sampled in turn in every
round so the machine's load falls on all alike:

* `python -c print`: the interpreter's start plus tmux's own overhead (the floor);
* a minimal prompt_toolkit app (a `PromptSession` with rich imported): the library's floor;
* a minimal Textual app (one `Input`): the other candidate (clients/tether_chat/__init__.py);
* `tether chat` to its prompt `› ` and to `ready` in the status line (scripted provider).

Run without PYTHONDONTWRITEBYTECODE (this script drops it for its children), or every
spawn recompiles every module. Nothing here is asserted; tests do not time things.
Goal: `tether chat` to its prompt <= 300 ms on this machine.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "examples" / "basic-turn.json"
_PTK = (
    "import asyncio, rich.console, rich.markdown\n"
    "from prompt_toolkit import PromptSession\n"
    "asyncio.run(PromptSession().prompt_async('READY> '))\n"
)
_TEXTUAL = (
    "from textual.app import App\nfrom textual.widgets import Input\n"
    "class A(App):\n    def compose(self):\n        yield Input(placeholder='READY')\n"
    "A().run()\n"
)


def _sample(command: str, marker: str, env: dict[str, str], n: int) -> float | None:
    sock = f"tether-chat-bench-{os.getpid()}-{n}"
    tmux = ["tmux", "-L", sock, "-f", "/dev/null"]
    subprocess.run([*tmux, "new-session", "-d", "-s", "b", "-x", "80", "-y", "24", "sleep 600"], env=env, check=True)
    try:
        subprocess.run([*tmux, "capture-pane", "-p", "-t", "b"], check=True, capture_output=True)
        start = time.perf_counter()
        subprocess.run([*tmux, "respawn-pane", "-k", "-t", "b", command], env=env, check=True)
        while time.perf_counter() - start < 20:
            screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", "b"], capture_output=True, text=True).stdout
            if marker in screen:
                return (time.perf_counter() - start) * 1000
        return None
    finally:
        path = subprocess.run([*tmux, "display-message", "-p", "#{socket_path}"], capture_output=True, text=True)
        subprocess.run([*tmux, "kill-server"], capture_output=True)
        if path.stdout.strip():
            Path(path.stdout.strip()).unlink(missing_ok=True)  # tmux leaves it behind


def _targets(python: str, scratch: Path) -> dict[str, tuple[str, str]]:
    (scratch / "ptk.py").write_text(_PTK)
    (scratch / "textual_app.py").write_text(_TEXTUAL)
    workspace = scratch / "ws"
    workspace.mkdir(exist_ok=True)
    chat = shlex.join(
        [
            python,
            "-m",
            "tether",
            "chat",
            "--provider",
            "scripted",
            "--script",
            str(SCRIPT),
            "--workspace",
            str(workspace),
            "--home",
            str(scratch / "home"),
        ]
    )
    targets = {
        "python -c print": (f"{shlex.quote(python)} -c \"print('READY')\"; sleep 60", "READY"),
        "prompt_toolkit + rich, minimal": (f"{shlex.quote(python)} {scratch / 'ptk.py'}", "READY"),
        "tether chat: the prompt": (chat, "›"),
        "tether chat: ready (daemon up, session open)": (chat, "│ ready"),
    }
    try:
        import textual  # noqa: F401  (measured only where it is installed)

        targets["Textual, minimal"] = (f"{shlex.quote(python)} {scratch / 'textual_app.py'}", "READY")
    except ImportError:
        pass
    return targets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("TETHER_")}
    env["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="tether-chat-bench-cfg-")
    with tempfile.TemporaryDirectory(prefix="tether-chat-bench-") as tmp:
        targets = _targets(sys.executable, Path(tmp))
        samples: dict[str, list[float]] = {name: [] for name in targets}
        n = 0
        for round_ in range(args.runs + 1):  # round 0 warms up (byte code, the home's database)
            for name, (command, marker) in targets.items():
                n += 1
                took = _sample(command, marker, env, n)
                if round_ and took is not None:
                    samples[name].append(took)
    floor = statistics.median(samples["python -c print"] or [1.0])
    print(f"{'target':<48} {'median':>8} {'min':>7} {'max':>7}  minus floor  (ms; {args.runs} runs)")
    for name, xs in samples.items():
        if not xs:
            print(f"{name:<48} no marker within 20 s")
            continue
        med = statistics.median(xs)
        print(f"{name:<48} {med:8.0f} {min(xs):7.0f} {max(xs):7.0f}  {med - floor:9.0f}")


if __name__ == "__main__":
    main()
