"""Reading a session's messages a page at a time, for showing it again (`session/load`).

Owns: the paged read behind ``HistoryStore.message_pages`` (the next page read in the
connection's thread while the caller works on this one). Must not: write, or build more
of a message than showing it needs.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from tether.store.database import Database
from tether.store.records import MessageView, decode_bodies


async def read_pages(db: Database, session_id: str, size: int, first: int | None) -> AsyncIterator[list[MessageView]]:
    """``HistoryStore.message_pages``: ``first`` rows (or ``size``), then ``size`` at a time."""
    select = "SELECT role, body, status, seq FROM messages WHERE session_id = ? AND rewound IS NULL"
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
                bodies = decode_bodies([row[1] for row in rows])
                yield [(row[0], body, row[2]) for row, body in zip(rows, bodies)]
    finally:
        if reading is not None:
            reading.cancel()
