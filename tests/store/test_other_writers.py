"""Whether another connection wrote to the history: what lets a prompt skip the rewind query.

Real SQLite files, a second real connection as the shell's `tether sessions` would open; a
prompt's check (`quiet_since`) must say "not quiet" after any commit it did not make.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

from tether.store import HistoryStore, MessageRecord

if TYPE_CHECKING:
    from pathlib import Path


def _user(text: str) -> MessageRecord:
    return MessageRecord("user", {"role": "user", "content": [{"type": "text", "text": text}]})


def _shell_writes(db_path: Path, *, checkpoint: bool = False) -> None:
    """A commit from another connection (with ``checkpoint``: after a full checkpoint, so the
    log starts over at its first frame and keeps its size)."""
    with closing(sqlite3.connect(db_path, isolation_level=None)) as conn:
        if checkpoint:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("UPDATE sessions SET title = 'from the shell' WHERE id = 's'")


async def _turn(store: HistoryStore, turn: str) -> None:
    await store.begin_turn("s", turn, _user(turn))
    await store.finish_turn(turn, "complete", "end_turn")


async def test_quiet_only_while_this_connection_alone_has_written(db_path: Path) -> None:
    async with await HistoryStore.open(db_path) as store:
        await store.create_session("s", "/w", "ask")
        writers = store.other_writers
        mark = writers.found  # a session's rewinds read now
        await _turn(store, "t1")
        assert writers.quiet_since(mark)  # its own turn alone: no query needed
        assert writers.quiet_since(mark)  # asking does not change it

        _shell_writes(db_path)
        assert not writers.quiet_since(mark)
        await _turn(store, "t2")  # the daemon's own write after it does not hide it
        assert not writers.quiet_since(mark)

        mark = writers.found  # read again (the query that saw the shell's commit)
        await _turn(store, "t3")
        assert writers.quiet_since(mark)


async def test_a_commit_between_the_read_and_the_next_write_is_counted(db_path: Path) -> None:
    async with await HistoryStore.open(db_path) as store:
        await store.create_session("s", "/w", "ask")
        await _turn(store, "t1")
        mark = store.other_writers.found
        _shell_writes(db_path)  # before the daemon writes again: only data_version tells
        await _turn(store, "t2")
        assert not store.other_writers.quiet_since(mark)


async def test_a_commit_after_the_log_started_over_is_seen(db_path: Path) -> None:
    async with await HistoryStore.open(db_path) as store:
        await store.create_session("s", "/w", "ask")
        for turn in ("t1", "t2", "t3"):  # a log of several frames, which a restart overwrites
            await _turn(store, turn)
        mark = store.other_writers.found
        _shell_writes(db_path, checkpoint=True)
        assert not store.other_writers.quiet_since(mark)


async def test_a_database_opened_since_a_commit_counts_it_once_read(db_path: Path) -> None:
    async with await HistoryStore.open(db_path) as store:
        await store.create_session("s", "/w", "ask")
    _shell_writes(db_path)
    async with await HistoryStore.open(db_path) as store:
        assert not store.other_writers.quiet_since(-1)  # a session not read yet always queries
        mark = store.other_writers.found
        await _turn(store, "t1")
        assert store.other_writers.quiet_since(mark)
