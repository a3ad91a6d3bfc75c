"""Reading a session's messages a page at a time, for showing it again (`session/load`).

Owns: the paged read behind ``HistoryStore.message_pages`` (the next page read while the
caller works on this one; ``turn_pages`` adds turn ids and seqs, for ACP v2's message ids)
and where the last compaction summary lies in it (``last_summary``).
Must not: write, or build more of a message than showing it needs.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from tether.store.records import MessageView, TurnMessageView, decode_bodies

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterator

    from tether.store.database import Database
    from tether.store.history import HistoryStore

_SELECT = "SELECT role, body, status, seq, turn_id FROM messages WHERE session_id = ? AND rewound IS NULL"
# searched from the end (the session's index, newest first): in a compacted session the
# last summary is near the end; the body is looked into only where the word is in it
_LAST_SUMMARY = (
    "SELECT (SELECT count(*) FROM messages WHERE session_id = s.session_id AND rewound IS NULL AND seq < s.seq),"
    " json_extract(s.body, '$.compaction.kept') FROM messages AS s WHERE s.session_id = ? AND s.rewound IS NULL"
    " AND s.role = 'user' AND instr(s.body, '\"compaction\"') > 0 AND json_type(s.body, '$.compaction') = 'object'"
    " ORDER BY s.seq DESC LIMIT 1"
)


async def last_summary(store: HistoryStore, session_id: str) -> tuple[int, object] | None:
    """Where the session's last compaction summary is among the messages ``message_pages``
    reads (how many come before it) and its ``kept``; None when it has none."""
    rows = await store.query(_LAST_SUMMARY, (session_id,))
    return (int(rows[0][0]), rows[0][1]) if rows else None


async def read_pages(db: Database, session_id: str, size: int, first: int | None) -> AsyncIterator[list[MessageView]]:
    """``HistoryStore.message_pages``: ``first`` rows (or ``size``), then ``size`` at a time."""
    async with contextlib.aclosing(_pages(db, session_id, size, first)) as pages:
        async for rows, bodies in pages:
            yield [(row[0], body, row[2]) for row, body in zip(rows, bodies, strict=True)]


async def turn_pages(
    db: Database, session_id: str, size: int, first: int | None
) -> AsyncIterator[list[TurnMessageView]]:
    """``read_pages`` with each message's turn id (None: a message stored outside a turn) and seq."""
    async with contextlib.aclosing(_pages(db, session_id, size, first)) as pages:
        async for rows, bodies in pages:
            yield [(row[0], body, row[2], row[4], row[3]) for row, body in zip(rows, bodies, strict=True)]


async def _pages(
    db: Database, session_id: str, size: int, first: int | None
) -> AsyncGenerator[tuple[list[Any], list[Any]], None]:
    """The rows, ``first`` (or ``size``), then ``size`` at a time, with their decoded bodies."""
    select = _SELECT
    limit = size if first is None else first
    after = f"{select} AND seq > ? ORDER BY seq LIMIT {size:d}"
    reading: asyncio.Future[list[Any]] | None = asyncio.ensure_future(
        db.read(f"{select} ORDER BY seq LIMIT {limit:d}", (session_id,))
    )
    try:
        while reading is not None:
            rows = await reading
            reading = None
            if len(rows) == limit:  # maybe more
                reading = asyncio.ensure_future(db.read(after, (session_id, rows[-1][3])))
            limit = size
            if rows:
                yield rows, decode_bodies([row[1] for row in rows])
    finally:
        if reading is not None:
            reading.cancel()
