"""Editor windows (`tether acp --shared` processes on stdio) of one shared daemon."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import pytest

from daemon_harness import BASIC_SCRIPT

APPROVALS = BASIC_SCRIPT.parent / "approvals.json"


class Windows:
    """Starts windows; at the end closes them and stops every daemon they started."""

    def __init__(self, env: dict[str, str], workspace: Path, tmp: Path) -> None:
        self.env = env
        self.workspace = workspace
        self.tmp = tmp
        self.runtime = Path(env["XDG_RUNTIME_DIR"]) / "tether"
        self.clients: list = []

    def command(self, *extra: str, script: Path = APPROVALS, verb: str = "acp") -> list[str]:
        return [
            sys.executable,
            "-m",
            "tether",
            verb,
            "--shared",
            "--provider",
            "scripted",
            "--script",
            str(script),
            *extra,
        ]

    async def open(
        self,
        *extra: str,
        script: Path = APPROVALS,
        on_request=None,
        env: dict[str, str] | None = None,
        initialize: bool = True,
    ):
        from tether_client import TetherClient

        err = open(self.tmp / f"window-{len(self.clients)}.stderr", "wb")  # noqa: SIM115 (a child's stderr: open as long as the child runs)
        client = await TetherClient.spawn(
            command=self.command(*extra, script=script),
            env=env or self.env,
            cwd=self.workspace,
            stderr=err,
            framing="ndjson",
            on_request=on_request,
        )
        err.close()
        self.clients.append(client)
        if initialize:
            await client.initialize()
        return client

    def daemon_pids(self) -> list[int]:
        pids = []
        for pid_file in self.runtime.glob("daemon-*.pid") if self.runtime.exists() else ():
            pid = _read_pid(pid_file)
            if pid is not None and _alive(pid):
                pids.append(pid)
        return pids

    def sockets(self) -> list[Path]:
        return sorted(self.runtime.glob("*.sock")) if self.runtime.exists() else []

    def log(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in (self.tmp / "state" / "tether").glob("*.log"))

    async def close(self) -> None:
        for client in self.clients:
            with contextlib.suppress(Exception):
                await client.close()
        for pid in self.daemon_pids():
            os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture
def shared_env(daemon_env: dict[str, str], tmp_path: Path):
    # a short directory: a Unix socket's path has at most 107 bytes
    runtime = Path(tempfile.mkdtemp(prefix="t21-", dir="/tmp"))
    env = dict(daemon_env)
    env["XDG_RUNTIME_DIR"] = str(runtime)
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    yield env
    shutil.rmtree(runtime, ignore_errors=True)


@pytest.fixture
async def windows(shared_env: dict[str, str], workspace: Path, tmp_path: Path):
    opened = Windows(shared_env, workspace, tmp_path)
    yield opened
    await opened.close()


def _read_pid(pid_file: Path) -> int | None:
    """The pid a daemon wrote, or None once it removed the file on its way out (between the
    glob and the read). A file being written (truncated, then the pid) is read again."""
    for _ in range(100):
        try:
            text = pid_file.read_text()
        except FileNotFoundError:
            return None
        if text.strip():
            return int(text)
        time.sleep(0.01)
    raise AssertionError(f"{pid_file} stayed empty for a second")
