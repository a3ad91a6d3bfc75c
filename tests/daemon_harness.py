"""What the end-to-end tests share: how to start the daemon and read its updates."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
BASIC_SCRIPT = EXAMPLES / "basic-turn.json"


def serve_command(*extra: str, script: Path = BASIC_SCRIPT) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tether",
        "serve",
        "--provider",
        "scripted",
        "--script",
        str(script),
        *extra,
    ]


def initialize_fresh(params: object, env: dict[str, str], cwd: Path) -> dict:
    """The answer of a fresh `tether serve` (the fast start's) to one `initialize`."""
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}) + "\n"
    done = subprocess.run(serve_command(), input=line, capture_output=True, text=True, env=env, cwd=cwd, timeout=60)
    answers = [json.loads(out) for out in done.stdout.splitlines() if out.startswith("{")]
    assert answers, done.stderr
    return answers[0]


def kinds(updates: list[dict]) -> list[str]:
    """Update kinds with consecutive repeats of text/thought chunks collapsed."""
    out: list[str] = []
    for update in updates:
        kind = update["sessionUpdate"]
        if out and out[-1] == kind and kind in ("agent_message_chunk", "agent_thought_chunk"):
            continue
        out.append(kind)
    return out


def text_of(updates: list[dict], kind: str = "agent_message_chunk") -> str:
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == kind)


class User:
    """Answers the daemon's permission requests with the given options, in order (or
    never, leaving each question open), and keeps what it was asked."""

    def __init__(self, *answers: str, never: bool = False) -> None:
        self.answers = list(answers)
        self.prompts: list[dict] = []
        self.never = never

    async def on_request(self, method: str, params: dict):
        assert method == "session/request_permission"
        self.prompts.append(params)
        if self.never:
            await asyncio.Event().wait()
        return {"outcome": {"outcome": "selected", "optionId": self.answers.pop(0)}}


async def until(predicate, timeout: float = 15.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


async def left_waiting(spawn_daemon, workspace: Path) -> str:
    """A daemon running examples/approvals.json asks to approve the edit of the README and
    is killed (SIGKILL) while waiting; the session's id."""
    user = User(never=True)
    first = await spawn_daemon(script=EXAMPLES / "approvals.json")
    first.client.peer.on_request = user.on_request
    session = await first.client.new_session(workspace)
    session.prompt("edit the readme").start()
    await until(lambda: user.prompts)
    os.kill(first.pid, signal.SIGKILL)
    await first.client.process.wait()
    return session.id


def item_cancel_script(folder: Path) -> tuple[Path, str, str]:
    """examples/v2-item-cancel.json written into `folder` with its two `sleep` durations
    made unique to this run (as `sleep 31.<n>`, `sleep 32.<n>`), and the two durations:
    tests that look for the command's processes by their arguments then never count the
    processes of another test running the same script beside them (pytest -n)."""
    n = f"{os.getpid():07d}{next(_RUNS) % 1000:03d}"  # one length: none is a prefix of another
    first, second = f"31.{n}", f"32.{n}"
    text = (EXAMPLES / "v2-item-cancel.json").read_text()
    assert "sleep 31.25" in text and "sleep 32.75" in text
    path = folder / "v2-item-cancel.json"
    path.write_text(text.replace("sleep 31.25", f"sleep {first}").replace("sleep 32.75", f"sleep {second}"))
    return path, first, second


_RUNS = itertools.count()


def host_pids(marker: str) -> list[int]:
    """Pids (in this PID namespace) of live processes with `marker` as one of their
    arguments: a sandboxed command sees its own PID namespace, so a `$!` it writes down
    means nothing out here. A zombie (dead, waiting for a slow init to reap it) is dead."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{name}/stat").read_text().rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in argv and state != "Z":
            found.append(int(name))
    return found
