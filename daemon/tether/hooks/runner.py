"""Running one hook command: as `run_command` runs a command, with the event on stdin.

Owns: the hook's process (`/bin/sh -c` in the commands' OS sandbox and minimal environment), its stdin (the
event JSON from a file), its capped stdout and stderr, its timeout, and its temp directory's removal.
Must not: interpret the output (`answers.py` does) or raise for anything the hook did (a `HookRun` says so).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread

from ..sandbox import SandboxPolicy, choose_sandbox
from ..tools.process_group import run_in_process_group
from ..tools.subprocess_env import command_env

__all__ = ["OUTPUT_CAP", "HookRun", "run_hook"]

OUTPUT_CAP = 64 * 1024  # bytes of stdout (and of stderr) a hook may answer with
# stdin and stderr through files: the process runner gives a command no stdin and merges stderr
_WRAP = 'exec <"$TETHER_HOOK_EVENT" 2>"$TETHER_HOOK_STDERR"\n'


@dataclass(frozen=True, slots=True)
class HookRun:
    stdout: str
    stderr: str
    exit_code: int | None  # None: it did not run to an exit (timeout, could not start)
    problem: str = ""  # why there is no usable answer ("" when it ran and exited)
    over_cap: bool = False


@dataclass(frozen=True, slots=True)
class HookPlace:
    """Where hooks run and what they may see (the session's, as for its commands)."""

    workspace: Path
    sandbox_setting: str = "auto"
    env_allow: tuple[str, ...] = ()
    hidden_paths: tuple[str, ...] = ()


async def run_hook(command: str, event: bytes, timeout: float, place: HookPlace) -> HookRun:
    choice = await anyio.to_thread.run_sync(choose_sandbox, place.sandbox_setting)
    tmpdir = tempfile.mkdtemp(prefix="tether-hook-")
    fds: list[int] = []
    try:
        event_path, err_path = os.path.join(tmpdir, ".event.json"), os.path.join(tmpdir, ".stderr")
        Path(event_path).write_bytes(event)
        env = command_env(place.env_allow, tmpdir)
        env.update(TETHER_HOOK_EVENT=event_path, TETHER_HOOK_STDERR=err_path)
        script = _WRAP + command
        argv = ["/bin/sh", "-c", script]
        if choice.sandbox is not None:
            policy = SandboxPolicy(
                workspace=str(place.workspace),
                tmpdir=tmpdir,
                cwd=str(place.workspace),
                network=False,
                hidden=place.hidden_paths,
                writable=True,
            )
            try:
                argv, fds = choice.sandbox.prepare(argv, policy)
            except (OSError, ValueError) as error:
                return HookRun("", "", None, f"could not set up the {choice.sandbox.name} sandbox: {error}")
        out = bytearray()
        over = [False]

        def on_data(data: bytes) -> None:
            room = OUTPUT_CAP - len(out)
            if len(data) > room:
                over[0] = True
            out.extend(data[: max(room, 0)])

        try:
            outcome = await run_in_process_group(
                script,
                cwd=str(place.workspace),
                env=env,
                timeout=timeout,
                on_data=on_data,
                argv=argv,
                pass_fds=fds,
            )
        except OSError as error:
            return HookRun("", "", None, f"could not start: {error}")
        finally:
            for fd in fds:
                os.close(fd)
        stderr = _read_capped(err_path)
        text = out.decode("utf-8", "replace")
        if outcome.timed_out:
            return HookRun(text, stderr, None, f"timed out after {timeout:g} s", over[0])
        return HookRun(text, stderr, outcome.returncode, "", over[0])
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(lambda: shutil.rmtree(tmpdir, ignore_errors=True))


def _read_capped(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(OUTPUT_CAP).decode("utf-8", "replace")
    except OSError:
        return ""
