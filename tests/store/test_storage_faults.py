"""Faults of the disk, the file or the folder are ``StorageFault`` with SQLite's (or the OS's)
words, the path and what to do; a turn left waiting for approval blocks the next turn
until it is answered or cancelled (``cancel_waiting``). Real files, no mocks."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import pytest

from tether.store import HistoryStore, MessageRecord, StorageFault, StoreError, TurnWaiting, database_path
from tether.store.errors import fault_of
from tether.store.paths import stored_database
from tether_protocol import PendingApprovals, PendingCall

if TYPE_CHECKING:
    from pathlib import Path

PENDING = PendingApprovals(step=2, calls=[PendingCall("c2", "write_file", {"path": "a"})])


def user(text: str) -> MessageRecord:
    return MessageRecord("user", {"role": "user", "content": [{"type": "text", "text": text}]})


async def waiting_session(store: HistoryStore) -> None:
    await store.create_session("s", "/w", "ask")
    await store.begin_turn("s", "t1", user("write a"))
    await store.commit_step(
        "s",
        "t1",
        [
            MessageRecord(
                "assistant",
                {
                    "role": "assistant",
                    "text": "",
                    "tool_calls": [{"id": "c2", "name": "write_file", "arguments": {}}],
                },
            )
        ],
        PENDING,
    )


def test_sqlite_faults_are_storage_faults_and_misuse_is_not(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    full = fault_of(sqlite3.OperationalError("database or disk is full"), path)
    assert isinstance(full, StorageFault) and full.path == str(path)
    assert str(full) == f"database or disk is full: {path} (free some disk space; what was stored before is kept)"
    odd = fault_of(sqlite3.OperationalError("something new"), path)
    assert isinstance(odd, StorageFault) and str(odd) == f"something new: {path}"
    for bug in (sqlite3.ProgrammingError("Incorrect number of bindings"), sqlite3.IntegrityError("UNIQUE")):
        assert type(fault_of(bug, path)) is StoreError


async def test_a_truncated_file_is_a_storage_fault(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    async with await HistoryStore.open(path) as store:
        for i in range(40):
            await store.create_session(f"s{i}", "/w", "ask", title="t" * 2000)
    with open(path, "r+b") as handle:
        handle.truncate(path.stat().st_size // 2)
    with pytest.raises(StorageFault, match=r"^database disk image is malformed: .*truncated"):
        await HistoryStore.open(path)


def test_a_home_in_the_way_is_a_storage_fault_for_writers_and_readers(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("")
    for make in (database_path, stored_database):
        with pytest.raises(StorageFault, match=rf"^history directory not writable: {home} \(a file is in the way"):
            make(tmp_path, home)
    assert stored_database(tmp_path, tmp_path / "nothing-yet") is None  # nothing created
    assert not (tmp_path / "nothing-yet").exists()


async def test_no_turn_begins_while_one_waits_and_cancelling_it_keeps_the_calls_paired(
    store: HistoryStore, db_path: Path
) -> None:
    await waiting_session(store)
    with pytest.raises(TurnWaiting) as caught:
        await store.begin_turn("s", "t2", user("next"))
    assert caught.value.turn_id == "t1" and "left waiting for approval" in str(caught.value)

    result = MessageRecord(
        "tool", {"role": "tool", "tool_call_id": "c2", "name": "write_file", "content": "not run", "is_error": True}
    )
    assert await store.cancel_waiting("s", "t1", [result])
    assert not await store.cancel_waiting("s", "t1", [result])  # only once
    assert await store.waiting_turn("s") is None
    await store.begin_turn("s", "t2", user("next"))
    with closing(sqlite3.connect(db_path)) as conn:
        assert conn.execute("SELECT id, status, stop_reason, pending FROM turns ORDER BY seq").fetchall() == [
            ("t1", "cancelled", "cancelled", None),
            ("t2", "running", None, None),
        ]
        assert conn.execute("SELECT seq, role FROM messages ORDER BY seq").fetchall() == [
            (0, "user"),
            (1, "assistant"),
            (2, "tool"),
            (3, "user"),
        ]
