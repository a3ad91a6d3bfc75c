"""Opening one history database from many connections at once: every opener succeeds.

SQLite's busy timeout does not cover the switch of a new database to WAL (it upgrades a
read lock to a write lock, which SQLite refuses at once while another connection holds
the write lock): two daemons opening a new database together failed `session/new` with
"database is locked". The end-to-end version, with real daemons, is
tests/e2e/test_daemons_starting_together.py.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from typing import TYPE_CHECKING

from tether.store import HistoryStore, latest_version

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import OldDatabase, Query

OPENERS = 10


async def _open_together(db_path: Path) -> list[int]:
    stores = await asyncio.gather(*(HistoryStore.open(db_path) for _ in range(OPENERS)))
    for n, store in enumerate(stores):
        await store.create_session(f"s{n}", "/w", "code")
    versions = [store.schema_version for store in stores]
    await asyncio.gather(*(store.close() for store in stores))
    return versions


async def test_ten_openers_of_a_new_database_all_succeed(db_path: Path, query: Query) -> None:
    assert await _open_together(db_path) == [latest_version()] * OPENERS
    assert [row[0] for row in query("SELECT version FROM schema_version ORDER BY version")] == list(
        range(1, latest_version() + 1)
    )  # each migration applied once
    assert query("PRAGMA journal_mode") == [("wal",)]
    assert len(query("SELECT id FROM sessions")) == OPENERS


async def test_ten_openers_of_an_old_database_migrate_it_once(
    db_path: Path, query: Query, old_database: OldDatabase
) -> None:
    await old_database(3, [("user", '{"role":"user","content":[{"type":"text","text":"old words"}]}')])
    assert await _open_together(db_path) == [latest_version()] * OPENERS
    assert [row[0] for row in query("SELECT version FROM schema_version ORDER BY version")] == list(
        range(1, latest_version() + 1)
    )
    assert query("SELECT title FROM sessions WHERE id = 'old'") == [("Old talk",)]


async def test_another_program_holding_the_write_lock_of_a_new_database_is_waited_for(db_path: Path) -> None:
    """Another program (or an older Tether, which does not take Tether's open lock) is in a
    write transaction on the new, not yet WAL, database while Tether opens it."""
    held, release = threading.Event(), threading.Event()

    def other_program() -> None:
        conn = sqlite3.connect(db_path, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        held.set()
        release.wait(5)
        conn.execute("COMMIT")
        conn.close()

    thread = threading.Thread(target=other_program)
    thread.start()
    held.wait(5)
    try:
        opening = asyncio.ensure_future(HistoryStore.open(db_path))
        await asyncio.sleep(0.2)  # Tether has tried, and found the lock taken
        release.set()
        async with await opening as store:
            assert store.schema_version == latest_version()
    finally:
        release.set()
        thread.join()
