"""Running one shell command in its own process group, and killing that whole group.

Owns: spawning the argv in a new session, pumping merged output to a callback, the
timeout, and killing the group (SIGTERM, then SIGKILL) on every exit path; its limits:
docs/decisions/0009-tools.md. Must not: decode, cap or format output, know about tools
or the sandbox, or block the event loop.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from anyio.abc import ByteReceiveStream, Process

__all__ = ["GroupOutcome", "run_in_process_group"]

_POLL = 0.02
# How long SIGKILLed members get to disappear before we stop waiting (never blocks forever).
_KILL_WAIT = 1.0
# After the group is gone, output still buffered in the pipe is read for at most this long;
# a writer that escaped the group would otherwise keep the pipe open forever.
_DRAIN = 1.0
_PROC = "/proc"


@dataclass(slots=True)
class GroupOutcome:
    returncode: int  # the shell's; negative = killed by that signal
    timed_out: bool
    duration: float  # seconds, start to the group's death


async def run_in_process_group(
    command: str,
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout: float,
    on_data: Callable[[bytes], None],
    grace: float = 0.5,
    argv: Sequence[str] | None = None,
    pass_fds: Sequence[int] = (),
) -> GroupOutcome:
    """Run `command` with `/bin/sh -c` (or `argv`, which runs it some other way), feeding
    raw output chunks to `on_data` in order; `pass_fds` are inherited (the caller closes
    them).

    Cancellation (of the caller's scope) kills the group before it propagates.
    """
    started = time.monotonic()
    # Shielded: a cancel while it is being spawned would leave the process unkilled; it
    # is taken at the next checkpoint below instead, where the group is killed.
    with anyio.CancelScope(shield=True):
        process = await anyio.open_process(
            list(argv) if argv is not None else ["/bin/sh", "-c", command],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=tuple(pass_fds),
        )
    try:
        assert process.stdout is not None
        async with anyio.create_task_group() as group:
            pumped = anyio.Event()
            group.start_soon(_pump, process.stdout, on_data, pumped)
            with anyio.move_on_after(timeout) as deadline:
                await process.wait()
            # A normal exit may leave background children (`server &`): they die too.
            await terminate_group(process, grace)
            with anyio.move_on_after(_DRAIN):
                await pumped.wait()
            group.cancel_scope.cancel()
        returncode = await process.wait()
    except BaseException:
        # cancelled (or failed): the group must not outlive the call, whatever happens
        with anyio.CancelScope(shield=True):
            await terminate_group(process, grace)
        raise
    finally:
        with anyio.CancelScope(shield=True):
            await process.aclose()
    return GroupOutcome(returncode, deadline.cancelled_caught, time.monotonic() - started)


async def _pump(stream: ByteReceiveStream, on_data: Callable[[bytes], None], done: anyio.Event) -> None:
    try:
        async for chunk in stream:
            on_data(chunk)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        done.set()


async def terminate_group(process: Process, grace: float) -> None:
    """SIGTERM the group led by `process`, SIGKILL it after `grace`, then reap the leader.

    A live leader's descendants outside its group die too: a sandbox's inner process runs
    in a session of its own and dies with the leader only once it has asked to (bwrap's
    `--die-with-parent`), so a leader stopped in its first milliseconds would leave it
    running.
    """
    pgid = process.pid
    # Frozen first, the tree cannot grow while it is read; the group then gets its
    # SIGTERM (delivered on SIGCONT); what is left of the tree after it is killed.
    below = await anyio.to_thread.run_sync(_freeze, pgid) if process.returncode is None else {}
    if _signal_group(pgid, signal.SIGTERM):
        _signal_group(pgid, signal.SIGCONT)
        if not await _wait_group_gone(pgid, grace):
            _signal_group(pgid, signal.SIGKILL)
            await _wait_group_gone(pgid, _KILL_WAIT)
    if below:
        await anyio.to_thread.run_sync(_kill_frozen, below)
    if process.returncode is None:
        # The shell may have moved itself to another group; it is still our child.
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    await process.wait()


def _signal_group(pgid: int, signum: int) -> bool:
    """Send `signum` to the group; False if the group no longer exists."""
    # The pgid is safe to reuse as a target: Linux does not hand out a pid that is
    # still some group's id, and once the group is empty killpg fails.
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists but is not ours (cannot happen for our own session)
    return True


async def _wait_group_gone(pgid: int, limit: float) -> bool:
    """Poll until no live process is in the group; False if `limit` passed first."""
    end = time.monotonic() + limit
    while True:
        if not _signal_group(pgid, 0):
            return True
        # killpg(0) also counts zombies, which an init that reaps slowly (containers)
        # leaves behind for seconds; on Linux, ask /proc whether any member still runs.
        if os.path.isdir(_PROC) and not await anyio.to_thread.run_sync(_live_members, pgid):
            return True
        if time.monotonic() >= end:
            return False
        await anyio.sleep(_POLL)


def _live_members(pgid: int) -> bool:
    return any(stat.group == pgid for stat in _stats().values())


@dataclass(slots=True, frozen=True)
class _Stat:
    parent: int
    group: int
    stopped: bool
    started: bytes  # with the pid, names one process (pids are reused)


def _stats() -> dict[int, _Stat]:
    """Every live process by pid; {} without /proc."""
    found: dict[int, _Stat] = {}
    if not os.path.isdir(_PROC):
        return found
    for name in os.listdir(_PROC):
        if not name.isdigit():
            continue
        try:
            with open(f"{_PROC}/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # after "(comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt
        # cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 20 and fields[0] not in (b"Z", b"X"):
            found[int(name)] = _Stat(int(fields[1]), int(fields[2]), fields[0] in (b"T", b"t"), fields[19])
    return found


def _below(roots: set[int], stats: dict[int, _Stat]) -> set[int]:
    """`roots` and every live process below them."""
    children: dict[int, list[int]] = {}
    for pid, stat in stats.items():
        children.setdefault(stat.parent, []).append(pid)
    found, todo = set(), [r for r in roots if r in stats]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    return found


def _freeze(leader: int) -> dict[int, bytes]:
    """SIGSTOP the leader and everything below it, reading the tree again until it grows
    no more and all of it has stopped (a stopped process cannot fork); the members below
    the leader by pid, with their start times (one may yet leave the group: `setsid`)."""
    frozen: dict[int, _Stat] = {}
    end = time.monotonic() + _KILL_WAIT
    while True:
        stats = _stats()
        tree = _below({leader}, stats)
        for pid in tree:
            if pid not in frozen or frozen[pid].started != stats[pid].started:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGSTOP)
                frozen[pid] = stats[pid]
        if all(stats[pid].stopped for pid in tree) or time.monotonic() >= end:
            break
        time.sleep(0.001)
    return {pid: stat.started for pid, stat in frozen.items() if pid != leader}


def _kill_frozen(members: dict[int, bytes]) -> None:
    """SIGKILL the frozen members that are still the same processes."""
    stats = _stats()
    for pid, started in members.items():
        if pid in stats and stats[pid].started == started:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
