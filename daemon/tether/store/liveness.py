"""Which process owns a running turn, and whether that process is still alive.

Owns: this process's owner string ("pid:start-ticks": the start time from /proc tells a reused
pid apart; without /proc, the pid alone) and ``alive`` (a zombie is dead).
Must not: touch the database, or act on a process (``os.kill(pid, 0)`` only asks if it exists).
"""

from __future__ import annotations

import functools
import os


def _start_ticks(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return fields[19].decode()
    except (OSError, IndexError):
        return ""


@functools.lru_cache(maxsize=1)
def this_process() -> str:
    pid = os.getpid()
    return f"{pid}:{_start_ticks(pid)}"


def alive(owner: str | None) -> bool:
    if not owner:
        return False
    pid_text, _, ticks = owner.partition(":")
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    if pid == os.getpid():
        return owner == this_process()
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if _zombie(pid):  # dead, waiting to be reaped (a detached daemon's parent may never reap it)
        return False
    return not ticks or _start_ticks(pid) in ("", ticks)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return False
