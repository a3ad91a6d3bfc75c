"""Checkpoints: the SQL of what tool calls and rewinds changed in the workspace.

Owns: ``SCHEMA`` (``file_blobs``, ``file_changes``, ``rewinds``, ``messages.rewound``: v8), a
call's changes written with its result, the queries of rewinds and ``changes``, a rewind's rows.
Must not: touch the workspace, decide what a rewind restores (``server/rewind.py``), or
open transactions outside ``HistoryStore.transaction``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    import aiosqlite

    from tether.store.history import HistoryStore
    from tether.store.records import ChangeSet

__all__ = [
    "SCHEMA",
    "ChangeRow",
    "Ranges",
    "RewindRow",
    "apply_rewind",
    "blobs",
    "change_rows",
    "drop_unused_blobs",
    "hidden_now",
    "insert_changes",
    "last_rewind_id",
    "latest_marks",
    "message_role",
    "rewinds",
    "turn_running",
    "turn_start_seq",
]

SCHEMA = (
    "CREATE TABLE file_blobs (digest TEXT PRIMARY KEY, size INTEGER NOT NULL, data BLOB NOT NULL) WITHOUT ROWID",
    """
    CREATE TABLE rewinds (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        at_seq        INTEGER NOT NULL,
        to_seq        INTEGER NOT NULL,
        restore       TEXT NOT NULL,
        hidden_before TEXT NOT NULL,
        created_at    REAL NOT NULL
    )""",
    "CREATE INDEX rewinds_by_session ON rewinds (session_id, id)",
    """
    CREATE TABLE file_changes (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq        INTEGER,
        rewind_id  INTEGER REFERENCES rewinds (id) ON DELETE CASCADE,
        call_id    TEXT,
        path       TEXT NOT NULL,
        before     TEXT,
        after      TEXT,
        note       TEXT
    )""",
    "CREATE INDEX file_changes_by_session ON file_changes (session_id, id)",
    "ALTER TABLE messages ADD COLUMN rewound INTEGER",
)

# [lo, hi) message seq ranges, sorted and disjoint
Ranges = list[tuple[int, int]]


@dataclass(frozen=True, slots=True)
class ChangeRow:
    id: int
    seq: int | None  # the tool result's message seq; None for a rewind's row
    rewind_id: int | None
    call_id: str | None
    path: str
    before: str | None
    after: str | None
    note: str | None
    turn: int | None  # the turn's seq (a tool call's)


@dataclass(frozen=True, slots=True)
class RewindRow:
    id: int
    at_seq: int  # the session's next message seq when it ran
    to_seq: int  # the first message it took out of the model's view
    restore: str
    hidden_before: Ranges
    created_at: float


_INSERT_BLOB = "INSERT OR IGNORE INTO file_blobs (digest, size, data) VALUES (?, ?, ?)"
_INSERT_ROW = (
    "INSERT INTO file_changes (session_id, seq, rewind_id, call_id, path, before, after, note)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def insert_changes(conn: sqlite3.Connection, session_id: str, changed: Sequence[tuple[int, ChangeSet]]) -> None:
    """The files the calls changed, in the transaction that commits their results (seq: the result's)."""
    blob_rows = {d: (d, len(b), b) for _seq, cs in changed for d, b in cs.blobs.items()}
    if blob_rows:
        conn.executemany(_INSERT_BLOB, list(blob_rows.values()))
    conn.executemany(_INSERT_ROW, [(session_id, seq, None, cs.call_id, *row) for seq, cs in changed for row in cs.rows])


_ROW_SQL = (
    "SELECT c.id, c.seq, c.rewind_id, c.call_id, c.path, c.before, c.after, c.note, t.seq"
    " FROM file_changes AS c LEFT JOIN messages AS m ON m.session_id = c.session_id AND m.seq = c.seq"
    " LEFT JOIN turns AS t ON t.id = m.turn_id WHERE c.session_id = ?"
)


async def change_rows(store: HistoryStore, session_id: str, from_id: int = 0) -> list[ChangeRow]:
    """The session's file changes in the order they happened, from row ``from_id`` on."""
    rows = await store.query(f"{_ROW_SQL} AND c.id >= ? ORDER BY c.id", (session_id, from_id))
    return [ChangeRow(*row) for row in rows]


async def rewinds(store: HistoryStore, session_id: str) -> list[RewindRow]:
    rows = await store.query(
        "SELECT id, at_seq, to_seq, restore, hidden_before, created_at FROM rewinds WHERE session_id = ? ORDER BY id",
        (session_id,),
    )
    return [RewindRow(r[0], r[1], r[2], r[3], [tuple(x) for x in json.loads(r[4])], r[5]) for r in rows]


async def last_rewind_id(store: HistoryStore, session_id: str) -> int:
    """The id of the session's latest rewind, 0 when it has none (one indexed lookup)."""
    rows = await store.query("SELECT MAX(id) FROM rewinds WHERE session_id = ?", (session_id,))
    return int(rows[0][0] or 0) if rows else 0


async def latest_marks(store: HistoryStore, session_id: str) -> tuple[int, int | None]:
    """The session's latest rewind id (0: none) and the row id of its newest message (None: none),
    in one query of two indexed lookups. Message row ids are never reused: a message written since
    (another process's turn, the session deleted and restored) changes the second."""
    rows = await store.query(
        "SELECT (SELECT MAX(id) FROM rewinds WHERE session_id = ?),"
        " (SELECT id FROM messages WHERE session_id = ? ORDER BY seq DESC LIMIT 1)",
        (session_id, session_id),
    )
    rewind, newest = rows[0] if rows else (None, None)
    return int(rewind or 0), None if newest is None else int(newest)


async def turn_start_seq(store: HistoryStore, session_id: str, turn: int) -> int | None:
    """The seq of the first message of the session's turn ``turn`` (1 = the first); None: no such turn."""
    rows = await store.query(
        "SELECT MIN(m.seq) FROM turns AS t JOIN messages AS m ON m.turn_id = t.id WHERE t.session_id = ? AND t.seq = ?",
        (session_id, turn),
    )
    return int(rows[0][0]) if rows and rows[0][0] is not None else None


async def message_role(store: HistoryStore, session_id: str, seq: int) -> str | None:
    """The role of the session's message ``seq``; None: no such message."""
    rows = await store.query("SELECT role FROM messages WHERE session_id = ? AND seq = ?", (session_id, seq))
    return str(rows[0][0]) if rows else None


async def turn_running(store: HistoryStore, session_id: str) -> bool:
    """Whether a stored turn of the session is running (or waiting for approval), here or elsewhere."""
    rows = await store.query("SELECT 1 FROM turns WHERE session_id = ? AND status = 'running' LIMIT 1", (session_id,))
    return bool(rows)


async def turn_seqs(store: HistoryStore, session_id: str) -> dict[str, int]:
    """The session's turns: each turn's id and its seq (1 = the first)."""
    rows = await store.query("SELECT id, seq FROM turns WHERE session_id = ? ORDER BY seq", (session_id,))
    return {str(row[0]): int(row[1]) for row in rows}


async def seq_of_turn(store: HistoryStore, turn_id: str) -> int | None:
    """One turn's seq (a primary-key lookup: the prompt answer pays it once per turn)."""
    rows = await store.query("SELECT seq FROM turns WHERE id = ?", (turn_id,))
    return int(rows[0][0]) if rows else None


async def blobs(store: HistoryStore, digests: Sequence[str]) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    wanted = sorted(set(digests))
    for i in range(0, len(wanted), 500):
        part = wanted[i : i + 500]
        rows = await store.query(
            f"SELECT digest, data FROM file_blobs WHERE digest IN ({','.join('?' * len(part))})", part
        )
        found.update({row[0]: bytes(row[1]) for row in rows})
    return found


def ranges_of(seqs: Sequence[int]) -> Ranges:
    ranges: Ranges = []
    for seq in seqs:
        if ranges and ranges[-1][1] == seq:
            ranges[-1] = (ranges[-1][0], seq + 1)
        else:
            ranges.append((seq, seq + 1))
    return ranges


async def hidden_now(store: HistoryStore, session_id: str) -> Ranges:
    """The messages out of the model's view now (rewound)."""
    rows = await store.query(
        "SELECT seq FROM messages WHERE session_id = ? AND rewound IS NOT NULL ORDER BY seq", (session_id,)
    )
    return ranges_of([row[0] for row in rows])


async def next_seq(store: HistoryStore, session_id: str) -> int:
    rows = await store.query("SELECT COALESCE(MAX(seq), -1) + 1 FROM messages WHERE session_id = ?", (session_id,))
    return int(rows[0][0])


@dataclass(frozen=True, slots=True)
class NewRewind:
    """A rewind to record: the hidden set it leaves, its file rows and the blobs they need."""

    at_seq: int
    to_seq: int
    restore: str
    hidden_before: Ranges
    hidden_after: Ranges
    rows: tuple[tuple[str, str | None, str | None, str | None], ...]
    blobs: dict[str, bytes]


async def apply_rewind(store: HistoryStore, session_id: str, rewind: NewRewind) -> int:
    """Record a rewind and set which messages the model sees, in one transaction; its id."""

    async def work(conn: aiosqlite.Connection) -> int:
        running = await conn.execute_fetchall(
            "SELECT 1 FROM turns WHERE session_id = ? AND status = 'running' LIMIT 1", (session_id,)
        )
        if list(running):
            from tether.store.errors import StoreError

            raise StoreError("a turn of this session started meanwhile")
        cursor = await conn.execute(
            "INSERT INTO rewinds (session_id, at_seq, to_seq, restore, hidden_before, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, rewind.at_seq, rewind.to_seq, rewind.restore, json.dumps(rewind.hidden_before), time.time()),
        )
        rewind_id = int(cursor.lastrowid or 0)
        if rewind.blobs:
            await conn.executemany(_INSERT_BLOB, [(d, len(b), b) for d, b in rewind.blobs.items()])
        await conn.executemany(_INSERT_ROW, [(session_id, None, rewind_id, None, *row) for row in rewind.rows])
        if rewind.hidden_after != rewind.hidden_before:
            await conn.execute(
                "UPDATE messages SET rewound = NULL WHERE session_id = ? AND rewound IS NOT NULL", (session_id,)
            )
            for lo, hi in rewind.hidden_after:
                await conn.execute(
                    "UPDATE messages SET rewound = ? WHERE session_id = ? AND seq >= ? AND seq < ?",
                    (rewind_id, session_id, lo, hi),
                )
        return rewind_id

    return await store.transaction(work)


async def drop_unused_blobs(store: HistoryStore) -> None:
    """Delete the contents no recorded change names any more (after a session was deleted)."""

    async def work(conn: aiosqlite.Connection) -> None:
        await conn.execute(
            "DELETE FROM file_blobs WHERE digest NOT IN (SELECT before FROM file_changes WHERE before IS NOT NULL)"
            " AND digest NOT IN (SELECT after FROM file_changes WHERE after IS NOT NULL)"
        )

    await store.transaction(work)


def decode_ranges(raw: Any) -> Ranges:
    return [(int(lo), int(hi)) for lo, hi in raw]
