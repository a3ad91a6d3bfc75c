"""The stored prompt queue: prompts waiting for a running turn, so a restart knows them.

Owns: the `prompt_queue` rows (schema v9): added when a prompt is queued, removed when its turn
begins or it is withdrawn, and `not_run`, the rows a dead process left (reported on each
`session/load` until withdrawn; a live process's, this one's or another daemon's, never).
Must not: run or schedule a prompt (`tether.services.queue` does), or know the wire.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import aiosqlite

from tether.store.history import HistoryStore
from tether.store.liveness import alive, this_process
from tether_protocol import dumps_text, loads


@dataclass(frozen=True, slots=True)
class QueuedRow:
    id: str
    session_id: str
    prompt: list[Any]  # the prompt's content blocks, as the client sent them (JSON)
    preview: str
    queued_at: float
    owner: str


async def add(store: HistoryStore, session_id: str, queue_id: str, prompt: list[Any], preview: str) -> QueuedRow:
    row = QueuedRow(queue_id, session_id, prompt, preview, time.time(), this_process())

    async def work(conn: aiosqlite.Connection) -> None:
        await conn.execute(
            "INSERT INTO prompt_queue (id, session_id, prompt, preview, queued_at, owner) VALUES (?, ?, ?, ?, ?, ?)",
            (row.id, session_id, dumps_text(prompt), preview, row.queued_at, row.owner),
        )

    await store.transaction(work)
    return row


async def remove(store: HistoryStore, queue_ids: list[str]) -> None:
    if not queue_ids:
        return

    async def work(conn: aiosqlite.Connection) -> None:
        await conn.executemany("DELETE FROM prompt_queue WHERE id = ?", [(i,) for i in queue_ids])

    await store.transaction(work)


async def not_run(store: HistoryStore, session_id: str) -> list[QueuedRow]:
    """The session's rows whose process died before their turns began (oldest first)."""
    rows = await store.query(
        "SELECT id, session_id, prompt, preview, queued_at, owner FROM prompt_queue "
        "WHERE session_id = ? ORDER BY queued_at, rowid",
        (session_id,),
    )
    found = [QueuedRow(r[0], r[1], loads(r[2]), r[3], r[4], r[5]) for r in rows]
    return [r for r in found if r.owner != this_process() and not alive(r.owner)]

