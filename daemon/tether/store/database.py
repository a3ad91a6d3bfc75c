"""The history store's one SQLite connection and its transaction discipline.

Owns: opening (pragmas, migrations under ``openlock``), the lock keeping reads and transactions
apart, each write as one shielded BEGIN IMMEDIATE ... COMMIT, no write to a file deleted or replaced
since it opened, the WAL checkpoint, closing.
Must not: know any table but through the SQL and work it is handed (``history.py`` decides what).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import aiosqlite

from tether.store import schema
from tether.store.errors import StorageFault, StoreError, fault_of
from tether.store.openlock import opening

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Database", "Spawn", "Work"]

_T = TypeVar("_T")
# The WAL size from which a write is followed by a checkpoint: SQLite's own default
# (1,000 pages of 4 KiB), which its automatic checkpoint used before ours replaced it
CHECKPOINT_BYTES = 4 << 20
Work = Callable[[aiosqlite.Connection], Awaitable[_T]]
# Starts a background task in the owner's task group: (name, async function, *args).
Spawn = Callable[..., object]


class Database:
    """A migrated connection. Every call may come from a different asyncio task.

    Writes run in their own shielded task under ``_lock``: transactions never
    interleave, and a caller cancelled mid-write cannot leave a BEGIN open on the
    shared connection (the write still reaches COMMIT or ROLLBACK; the caller
    just stops waiting for it). Reads take the same lock because on a shared
    connection they would otherwise see another task's uncommitted rows.
    """

    path: Path
    schema_version: int

    def __init__(self, path: Path, conn: aiosqlite.Connection, schema_version: int, spawn: Spawn | None = None) -> None:
        # use Database.open(); this only wires up an already-migrated connection
        self.path = path
        self._spawn = spawn
        self.schema_version = schema_version
        self._conn: aiosqlite.Connection | None = conn
        self._lock = asyncio.Lock()
        self._writes: set[asyncio.Task[Any]] = set()
        self._wal = f"{path}-wal"
        self._checkpointing = False
        self._identity = _identity(path)

    @classmethod
    async def open(cls, path: Path, spawn: Spawn | None = None) -> Database:
        try:
            # isolation_level=None: autocommit, so our explicit BEGIN/COMMIT are the only transactions
            conn = await aiosqlite.connect(path, isolation_level=None)
        except sqlite3.Error as exc:
            raise fault_of(exc, path) from exc
        try:
            async with opening(path):  # switching to WAL and migrating, one opener at a time
                await schema.configure(conn)
                version = await schema.migrate(conn, path)
        except BaseException as exc:
            await conn.close()  # or aiosqlite's worker thread outlives us
            if isinstance(exc, sqlite3.Error):
                raise fault_of(exc, path) from exc
            raise
        return cls(path, conn, version, spawn)

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            if self._writes:
                # let shielded writes whose callers went away reach COMMIT/ROLLBACK
                await asyncio.wait(set(self._writes))
        finally:
            async with self._lock:
                await conn.close()

    async def read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """All rows of one query, as tuples."""
        async with self._lock:
            conn = self._live()  # inside the lock: close() may have run while we waited
            try:
                return list(await conn.execute_fetchall(sql, params))
            except sqlite3.Error as exc:
                raise fault_of(exc, self.path) from exc

    async def data_version(self) -> int:
        """SQLite's `PRAGMA data_version`: it changes when another connection (the `tether
        sessions` CLI, a second daemon) commits, never for this connection's own writes; equal
        at two calls, nobody else wrote to the history between them."""
        rows = await self.read("PRAGMA data_version")
        return int(rows[0][0])

    async def write(self, work: Work[_T]) -> _T:
        """Run ``work`` as one transaction; its result, or its exception after a rollback."""
        return await self._shielded(_in_steps, work)

    async def write_at_once(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """`write`, for ``work`` made of plain sqlite3 calls: it runs with its BEGIN and COMMIT
        in one trip to the connection's thread instead of one trip per statement (~50 µs
        each: a turn's start makes eight before its first chunk)."""
        return await self._shielded(_at_once, work)

    async def _shielded(self, run: Callable[[aiosqlite.Connection, Any], Awaitable[_T]], work: Any) -> _T:
        task = asyncio.ensure_future(self._transaction(self._live(), run, work))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
        return await asyncio.shield(task)

    def _live(self) -> aiosqlite.Connection:
        if self._conn is None:
            raise StoreError(f"history store {self.path} is closed")
        return self._conn

    async def _transaction(
        self, conn: aiosqlite.Connection, run: Callable[[aiosqlite.Connection, Any], Awaitable[_T]], work: Any
    ) -> _T:
        async with self._lock:
            if _identity(self.path) != self._identity:
                # SQLite would write on into the deleted file, and all of it would be lost
                raise StorageFault(
                    f"the history database was deleted or replaced while Tether was running: "
                    f"{self.path} (nothing more is written to it; restart Tether to start a new "
                    f"history there, or put the file back)",
                    self.path,
                )
            try:
                result = await run(conn, work)
            except sqlite3.Error as exc:
                raise fault_of(exc, self.path) from exc
        if not self._checkpointing and _size(self._wal) >= CHECKPOINT_BYTES:
            # after this write's caller has its answer, before the next write waits long
            self._checkpointing = True
            if self._spawn is not None:  # the daemon's: its task group owns the checkpoint
                self._spawn("wal checkpoint", self._checkpoint, conn)
            else:
                task = asyncio.ensure_future(self._checkpoint(conn))
                self._writes.add(task)
                task.add_done_callback(self._writes.discard)
        return result

    async def _checkpoint(self, conn: aiosqlite.Connection) -> None:
        """Copy the WAL back into the database (PASSIVE: readers of other processes are
        not waited for; what they still need is copied by a later checkpoint), then let
        the connection's page cache go: it keeps every page it has read (up to
        `cache_size`), so a long-running daemon's memory would grow with its history;
        what the next turns need is read again from the OS's cache of the file."""
        try:
            async with self._lock:
                if self._conn is conn:
                    await conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
                    await conn.execute("PRAGMA shrink_memory")
        except sqlite3.Error:
            pass  # busy, or closing: the WAL keeps every commit, the next write tries again
        finally:
            self._checkpointing = False


# IMMEDIATE: take the write lock up front, so another process makes us wait
# (busy_timeout) at BEGIN instead of failing mid-transaction
async def _in_steps(conn: aiosqlite.Connection, work: Work[_T]) -> _T:
    await conn.execute("BEGIN IMMEDIATE")
    try:
        result = await work(conn)
        await conn.execute("COMMIT")
    except BaseException:
        await schema.rollback(conn)
        raise
    return result


async def _at_once(conn: aiosqlite.Connection, work: Callable[[sqlite3.Connection], _T]) -> _T:
    # aiosqlite runs a callable on its thread only through `_execute` (its statements do the same)
    result: _T = await conn._execute(_in_thread, conn._conn, work)  # type: ignore[no-untyped-call]  # noqa: SLF001
    return result


def _in_thread(conn: sqlite3.Connection, work: Callable[[sqlite3.Connection], _T]) -> _T:
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = work(conn)
        conn.execute("COMMIT")
    except BaseException:
        # as `schema.rollback`: SQLite may have ended it itself (e.g. on SQLITE_FULL)
        with contextlib.suppress(sqlite3.OperationalError):
            conn.execute("ROLLBACK")
        raise
    return result


def _identity(path: Path) -> tuple[int, int] | None:
    """The database file's (device, inode), None when it is gone: one stat per write."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
