"""The rows of an imported snapshot, and the SQL that inserts them a batch at a time.

Owns: turning checked snapshot records into the store's rows (turn ids mapped for a copy
under a new id, a copy's running turns stopped), and inserting batches of turns,
messages (with their search index) and reports inside the import's transaction.
Must not: check records (``snapshot_checks``), read snapshots, or open transactions.
"""

from __future__ import annotations

from typing import Any

import aiosqlite

from tether.store.records import encode_json, indexed_text
from tether.store.snapshot_checks import SnapshotError
from tether_protocol import JsonObject

__all__ = [
    "finish_stopped", "insert_messages", "insert_reports", "insert_turns", "message_row", "report_row", "turn_row",
]


def turn_row(turn: JsonObject, new_id: str, stop: bool) -> tuple[Any, ...]:
    """A checked turn's row under ``new_id``; ``stop``: a copy's running turn, ``interrupted``
    without pending approvals (its end, the last message's time, is set by ``finish_stopped``)."""
    if stop and turn["status"] == "running":
        return (new_id, turn["seq"], "interrupted", turn["stop_reason"], turn["started_at"],
                turn["started_at"], turn["error"], None)
    pending = turn["pending"]
    return (new_id, turn["seq"], turn["status"], turn["stop_reason"], turn["started_at"],
            turn["finished_at"], turn["error"], None if pending is None else encode_json(pending))


def message_row(message: JsonObject, turn_id: str | None) -> tuple[Any, ...]:
    body = message["body"]
    return (turn_id, message["seq"], message["role"], encode_json(body), message["status"],
            message["created_at"], indexed_text(message["role"], body))


def report_row(report: JsonObject, turn_id: str, session_id: str, created_at: float) -> tuple[Any, ...]:
    return (turn_id, session_id, encode_json(report), created_at)


async def insert_turns(conn: aiosqlite.Connection, session_id: str, rows: list[tuple[Any, ...]]) -> None:
    """Rows go to a TEMP table first, then over in one INSERT ... SELECT: executed row by
    row, the schema's CHECK (... IN (...)) constraints cost more than the insert itself
    (SQLite builds their lists again for every execution). Messages likewise."""
    await conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS import_turns"
        " (id, seq, status, stop_reason, started_at, finished_at, error, pending)"
    )
    await conn.execute("DELETE FROM temp.import_turns")
    await conn.executemany("INSERT INTO temp.import_turns VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    try:
        await conn.execute(
            "INSERT INTO turns (id, session_id, seq, status, stop_reason, started_at, finished_at, error,"
            " pending) SELECT id, ?, seq, status, stop_reason, started_at, finished_at, error, pending"
            " FROM temp.import_turns ORDER BY rowid",
            (session_id,),
        )
    except aiosqlite.IntegrityError as exc:
        raise SnapshotError(f"a turn of session {session_id!r} already exists: {exc}") from exc


async def insert_messages(conn: aiosqlite.Connection, session_id: str, rows: list[tuple[Any, ...]]) -> None:
    """A batch of messages in seq order, after those of the session already inserted."""
    if not rows:
        return
    await conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS import_messages (turn_id, seq, role, body, status, created_at, text)"
    )
    await conn.execute("DELETE FROM temp.import_messages")
    await conn.executemany("INSERT INTO temp.import_messages VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    await conn.execute(
        "INSERT INTO messages (session_id, turn_id, seq, role, body, status, created_at)"
        " SELECT ?, turn_id, seq, role, body, status, created_at FROM temp.import_messages ORDER BY rowid",
        (session_id,),
    )
    await _index_messages(conn, session_id, rows[0][1], rows[-1][1], len(rows))


async def _index_messages(conn: aiosqlite.Connection, session_id: str, first: int, last: int, count: int) -> None:
    """The search index (schema v5: written by the store), by the ids the batch got: one
    INSERT in our write transaction numbers them on from the table's largest id
    (AUTOINCREMENT), in import order, which is checked; else they are looked up by seq."""
    ((low, high, found),) = await conn.execute_fetchall(
        "SELECT min(id), max(id), count(*) FROM messages WHERE session_id = ? AND seq BETWEEN ? AND ?",
        (session_id, first, last),
    )
    if found == count and high - low + 1 == count:
        await conn.execute(
            "INSERT INTO messages_fts (rowid, text) SELECT ? + rowid - (SELECT min(rowid) FROM"
            " temp.import_messages), text FROM temp.import_messages WHERE text IS NOT NULL ORDER BY rowid",
            (low,),
        )
    else:
        await conn.execute(
            "INSERT INTO messages_fts (rowid, text) SELECT m.id, i.text FROM temp.import_messages AS i"
            " JOIN messages AS m ON m.session_id = ? AND m.seq = i.seq WHERE i.text IS NOT NULL"
            " ORDER BY m.id",
            (session_id,),
        )


async def insert_reports(conn: aiosqlite.Connection, rows: list[tuple[Any, ...]]) -> None:
    await conn.executemany(
        "INSERT INTO run_reports (turn_id, session_id, report, created_at) VALUES (?, ?, ?, ?)", rows
    )


async def finish_stopped(conn: aiosqlite.Connection, turn_ids: list[str]) -> None:
    """A copy's stopped turns end when their last message was (else when they began), and
    so do their reports."""
    params = [(turn_id,) for turn_id in turn_ids]
    await conn.executemany(
        "UPDATE turns SET finished_at = coalesce((SELECT max(created_at) FROM messages WHERE turn_id = ?1),"
        " started_at) WHERE id = ?1",
        params,
    )
    await conn.executemany(
        "UPDATE run_reports SET created_at = (SELECT finished_at FROM turns WHERE id = ?1) WHERE turn_id = ?1",
        params,
    )
