"""The write-ahead log: the store copies it back into the database itself, after a write
has answered (SQLite's automatic checkpoint is off), so it must still stay bounded."""

from __future__ import annotations

import asyncio
import ctypes
import os
import sqlite3
from contextlib import closing
from pathlib import Path

from tether.store import HistoryStore, MessageRecord
from tether.store.database import CHECKPOINT_BYTES


def _user(text: str) -> MessageRecord:
    return MessageRecord("user", {"role": "user", "content": [{"type": "text", "text": text}]})


async def test_the_log_stays_bounded_over_many_writes_and_every_commit_reads_back(db_path: Path) -> None:
    wal = Path(f"{db_path}-wal")
    largest = 0
    async with await HistoryStore.open(db_path) as store:
        await store.create_session("s", "/w", "ask")
        for t in range(300):  # ~30 MB of messages, ~100 KB a turn
            await store.begin_turn("s", f"t{t}", _user(f"turn {t} " + "x" * 100_000))
            await store.finish_turn(f"t{t}", "complete", "end_turn")
            await asyncio.sleep(0)  # the checkpoint runs after the write's caller resumes
            largest = max(largest, wal.stat().st_size)
        # one turn's commits are well under 1 MB: never more than one checkpoint's worth
        assert largest < CHECKPOINT_BYTES + (1 << 20)
        assert os.path.getsize(db_path) > 25_000_000  # copied back into the database file
    with closing(sqlite3.connect(db_path)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("SELECT count(*) FROM messages WHERE session_id = 's'").fetchone() == (300,)


def _sqlite_memory() -> int:
    """Bytes SQLite has allocated in this process (every connection's page cache among them)."""
    import _sqlite3

    used = ctypes.CDLL(_sqlite3.__file__).sqlite3_memory_used
    used.restype = ctypes.c_int64
    return int(used())


async def test_the_page_cache_is_let_go_at_each_checkpoint_so_memory_does_not_grow_with_the_history(
    db_path: Path,
) -> None:
    before = _sqlite_memory()
    largest = 0
    async with await HistoryStore.open(db_path) as store:
        await store.create_session("s", "/w", "ask")
        for t in range(300):  # ~30 MB of messages: the page cache (cache_size) would hold them all
            await store.begin_turn("s", f"t{t}", _user(f"turn {t} " + "x" * 100_000))
            await store.finish_turn(f"t{t}", "complete", "end_turn")
            await asyncio.sleep(0)
            largest = max(largest, _sqlite_memory() - before)
        assert os.path.getsize(db_path) > 25_000_000
        # what was written since the last checkpoint (about CHECKPOINT_BYTES), never the history
        assert largest < 3 * CHECKPOINT_BYTES, f"SQLite held {largest >> 20} MiB for a 30 MB history"
