"""The lock that makes opening one history database safe for any number of daemons.

Owns: an ``flock`` on ``history.sqlite3.lock`` beside the database, held while a connection
switches to WAL and migrates (SQLite's busy timeout does not cover those: docs/decisions/0015).
Must not: be held for anything but opening, or make an open fail because the lock file
cannot be made (a read-only folder opens unlocked).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
