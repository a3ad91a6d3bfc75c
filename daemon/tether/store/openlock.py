"""The lock that makes opening one history database safe for any number of daemons.

Owns: the advisory lock (``fcntl.flock``) on a sidecar file next to the database
(``history.sqlite3.lock``), held only while a connection is configured (the switch to
WAL) and migrated. SQLite's busy timeout does not cover those steps: a journal-mode
change or a lock upgrade two connections race for fails at once with "database is
locked", without calling the busy handler. Under this lock the openers take turns;
once open, SQLite's own locking (WAL, BEGIN IMMEDIATE, busy_timeout) takes over.
A program that does not take this lock (another tool, an older Tether) is waited for by
``schema.configure``'s retry instead.
Must not: be held for anything but opening; or make an open fail because the lock file
cannot be made (a read-only folder opens as it did before, unlocked).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from collections.abc import AsyncIterator
from pathlib import Path

__all__ = ["opening"]


@contextlib.asynccontextmanager
async def opening(path: Path) -> AsyncIterator[None]:
    """Hold ``path``'s open lock for the block; waiting for another opener does not
    block the event loop."""
    try:
        fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        yield  # no lock file possible (read-only folder): SQLite's own locking only
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another daemon is opening it: wait in a thread
            await asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the last descriptor releases the lock
