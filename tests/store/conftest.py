"""Fixtures for the history store tests: real SQLite files under tmp_path, no mocks."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import closing
from typing import TYPE_CHECKING, Any

import aiosqlite
import pytest

from tether.store import HistoryStore, schema

if TYPE_CHECKING:
    from pathlib import Path

Query = Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]]
OldDatabase = Callable[[int, list[tuple[str, str]]], Awaitable[None]]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "history.sqlite3"


@pytest.fixture
async def store(db_path: Path) -> AsyncIterator[HistoryStore]:
    async with await HistoryStore.open(db_path) as opened:
        yield opened


@pytest.fixture
def query(db_path: Path) -> Query:
    """Run one statement on a separate plain sqlite3 connection, as an outside observer."""

    def run(sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with closing(sqlite3.connect(db_path)) as conn, conn:
            return conn.execute(sql, params).fetchall()

    return run


@pytest.fixture
def old_database(db_path: Path) -> OldDatabase:
    """``old_database(version, bodies)`` writes ``db_path`` as schema ``version`` left it:
    session 'old' ("Old talk"), turn 't' and these (role, stored body text) messages,
    written through that version's migrations."""

    async def write(version: int, bodies: list[tuple[str, str]]) -> None:
        conn = await aiosqlite.connect(db_path, isolation_level=None)
        await schema.configure(conn)
        await conn.execute(schema._VERSION_TABLE)
        await conn.execute("BEGIN IMMEDIATE")
        for number, migration in enumerate(schema.MIGRATIONS[:version], start=1):
            await migration(conn)
            await conn.execute("INSERT INTO schema_version (version, applied_at) VALUES (?, 0)", (number,))
        await conn.execute(
            "INSERT INTO sessions (id, workspace, title, mode, created_at, updated_at) "
            "VALUES ('old', '/w', 'Old talk', 'ask', 1, 1)"
        )
        await conn.execute(
            "INSERT INTO turns (id, session_id, seq, status, started_at) VALUES ('t', 'old', 1, 'complete', 1)"
        )
        for seq, (role, body) in enumerate(bodies):
            await conn.execute(
                "INSERT INTO messages (session_id, turn_id, seq, role, body, created_at) "
                "VALUES ('old', 't', ?, ?, ?, 1)",
                (seq, role, body),
            )
        await conn.execute("COMMIT")
        await conn.close()

    return write


async def set_raw_pending(store: HistoryStore, turn_id: str, pending: dict[str, Any]) -> None:
    """A checkpoint as stored JSON, as it is (one with keys ``PendingApprovals`` does not know,
    or one an earlier Tether wrote)."""
    from tether.store.records import encode_json

    await store.transaction(
        lambda conn: conn.execute("UPDATE turns SET pending = ? WHERE id = ?", (encode_json(pending), turn_id))
    )


async def finish_with_raw_report(
    store: HistoryStore, turn_id: str, status: str, report: dict[str, Any] | None, error: str | None = None
) -> None:
    """``finish_turn`` with a run report as stored JSON, as it is: what a snapshot carries
    (any object; a daemon stores its ``RunReport``)."""
    import time

    from tether.store import turns
    from tether.store.records import encode_json

    text = None if report is None else encode_json(report)
    await store.transaction_at_once(
        lambda conn: turns.close_turn(conn, turn_id, status, "end_turn", error, text, time.time())
    )
