"""Idempotency keys of prompts: at most one turn per (session, key), across restarts.

Owns: the `prompt_keys` rows (schema v11; v12 adds the prompt's digest): a turn begun with a
key is written with its key and its prompt's digest in one transaction (`begin_keyed_turn`), so
a retry that finds the key never inserts the prompt again; and `find`, the turn a key began.
Must not: decide what a retry is answered (`tether.services.prompt_keys` does), or know the wire.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.store import turns
from tether.store.records import MessageRecord, TurnRecord, message_row

if TYPE_CHECKING:
    import sqlite3

    from tether.store.history import HistoryStore


@dataclass(frozen=True, slots=True)
class KeyedTurn:
    """The turn a key began: its id and seq, its status and stop reason (None while it runs)."""

    turn_id: str
    seq: int
    status: str
    stop_reason: str | None
    error: str | None
    prompt_digest: str  # "" for a key stored before schema v12


async def begin_keyed_turn(
    store: HistoryStore, session_id: str, turn_id: str, user_message: MessageRecord, key: str, prompt_digest: str
) -> TurnRecord:
    """`HistoryStore.begin_turn` and the key's row, in one transaction."""
    now = time.time()
    first = message_row(user_message, now)

    def work(conn: sqlite3.Connection) -> TurnRecord:
        record = turns.insert_turn(conn, session_id, turn_id, first, now)
        conn.execute(
            "INSERT INTO prompt_keys (session_id, key, turn_id, created_at, prompt_digest) VALUES (?, ?, ?, ?, ?)",
            (session_id, key, turn_id, now, prompt_digest),
        )
        return record

    return await store.transaction_at_once(work)


async def find(store: HistoryStore, session_id: str, key: str) -> KeyedTurn | None:
    rows = await store.query(
        "SELECT t.id, t.seq, t.status, t.stop_reason, t.error, k.prompt_digest FROM prompt_keys k JOIN turns t ON t.id = k.turn_id "
        "WHERE k.session_id = ? AND k.key = ?",
        (session_id, key),
    )
    return KeyedTurn(*rows[0]) if rows else None
