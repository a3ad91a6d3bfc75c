"""The history database's connection settings and the running of its migrations.

Owns: the per-connection pragmas, the ``schema_version`` table, running the steps of
``migrations.MIGRATIONS`` in order, each in one transaction with the row that records it (a crash
mid-upgrade leaves the previous version), and refusing a database of a newer Tether.
Must not: read or write history rows, or list the migrations again (``migrations.py`` does).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from typing import TYPE_CHECKING

from tether.store.errors import StorageFault, StoreError, fault_of
from tether.store.migrations import MIGRATIONS, Migration

if TYPE_CHECKING:
    from pathlib import Path

    import aiosqlite

__all__ = [
    "MIGRATIONS",
    "Migration",
    "configure",
    "latest_version",
    "migrate",
    "read_version",
    "rollback",
]

BUSY_TIMEOUT_MS = 5000

_PRAGMAS = (
    # first, so switching to WAL waits for another process instead of failing
    f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}",
    # WAL: readers never block the writer, and a killed process loses at most
    # the transaction it had not committed yet
    "PRAGMA journal_mode=WAL",
    # with WAL, NORMAL is still crash-safe for a process kill; only a power cut
    # can lose the last commits, and it saves an fsync on every step commit
    "PRAGMA synchronous=NORMAL",
    # off by default in SQLite and per connection; the ON DELETE CASCADEs need it
    "PRAGMA foreign_keys=ON",
    # up to 8 MiB of pages (allocated as used) instead of 2 (a bulk write spilled pages
    # mid-transaction); not more: a connection keeps every page it reads until the cache is
    # full, so one read of a big session (a load, a dump, a search) raised the daemon's
    # memory by the cache's size (32 MiB: load of 50,000 messages 115 -> 96 MB peak)
    "PRAGMA cache_size=-8192",
    # temporary tables (a restore's rows on their way in) in memory, not in a file
    "PRAGMA temp_store=MEMORY",
    # the WAL is copied back into the database by the store after a write has answered
    # (Database._checkpoint), not inside the COMMIT of whichever write found it full:
    # that cost a 10,000-message restore ~13 ms of its answer
    "PRAGMA wal_autocheckpoint=0",
    # and the WAL starts from empty again after one (SQLite keeps its size otherwise), so
    # its size tells the store when the next checkpoint is due
    "PRAGMA journal_size_limit=0",
)

_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS schema_version (
    version    INTEGER PRIMARY KEY,
    applied_at REAL NOT NULL
)"""


def latest_version() -> int:
    """The newest schema this code understands (``MIGRATIONS`` read at call time, so a test can
    extend this module's name for it)."""
    return len(MIGRATIONS)


async def configure(conn: aiosqlite.Connection) -> str:
    """Apply the per-connection pragmas; returns the journal mode SQLite settled on."""
    mode = "unknown"
    for pragma in _PRAGMAS:
        rows = await _retrying_busy(conn, pragma)
        if pragma.startswith("PRAGMA journal_mode") and rows:
            mode = str(rows[0][0]).lower()
    return mode


async def _retrying_busy(conn: aiosqlite.Connection, sql: str) -> list[sqlite3.Row]:
    """Run ``sql``, trying again for up to ``BUSY_TIMEOUT_MS`` while SQLite answers BUSY.

    Switching a new database to WAL upgrades a read lock to a write lock, and SQLite fails
    that at once, without waiting (busy_timeout), when another connection holds the write
    lock: Tether's own openers take turns under ``openlock``, but another program (or an
    older Tether) opening the same file does not.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            return list(await conn.execute_fetchall(sql))
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY or time.monotonic() >= deadline:
                raise
        await asyncio.sleep(0.01)


async def read_version(conn: aiosqlite.Connection) -> int:
    rows = list(await conn.execute_fetchall("SELECT COALESCE(MAX(version), 0) FROM schema_version"))
    return int(rows[0][0])


async def migrate(conn: aiosqlite.Connection, path: Path) -> int:
    """Bring the database up to ``latest_version()``; returns the version it ends at.

    The connection must be in autocommit mode (``isolation_level=None``) so the
    explicit BEGIN/COMMIT here are the only transactions.
    """
    await conn.execute(_VERSION_TABLE)
    known = latest_version()
    current = await read_version(conn)
    _refuse_newer(path, current, known)
    while current < known:
        target = current + 1
        # IMMEDIATE takes the write lock before re-reading the version, so two
        # daemons opening the same database cannot both apply one migration
        await conn.execute("BEGIN IMMEDIATE")
        try:
            current = await read_version(conn)
            _refuse_newer(path, current, known)
            if current < target:  # else another process applied it while we waited
                await MIGRATIONS[current](conn)
                await conn.execute(
                    "INSERT INTO schema_version (version, applied_at) VALUES (?, ?)",
                    (target, time.time()),
                )
                current = target
            await conn.execute("COMMIT")
        except BaseException as exc:
            await rollback(conn)
            if isinstance(exc, sqlite3.Error):
                raise fault_of(exc, path) from exc
            if isinstance(exc, Exception) and not isinstance(exc, StoreError):
                raise StoreError(
                    f"history database {path}: migration to schema version {target} failed: {exc}"
                ) from exc
            raise
    return current


def _refuse_newer(path: Path, current: int, known: int) -> None:
    if current > known:
        raise StorageFault(
            f"history database {path} has schema version {current}, "
            f"this tether understands up to {known}; upgrade tether",
            path,
        )


async def rollback(conn: aiosqlite.Connection) -> None:
    """ROLLBACK, tolerating a transaction SQLite already ended itself (e.g. on SQLITE_FULL)."""
    with contextlib.suppress(sqlite3.OperationalError):
        await conn.execute("ROLLBACK")
