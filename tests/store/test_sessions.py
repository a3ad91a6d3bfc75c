"""Session CRUD, newest-first paging, and cascading deletes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tether.store import HistoryStore, InvalidCursor, MessageRecord, StoreError

from .conftest import finish_with_raw_report

Query = Callable[..., list[Any]]


async def test_create_and_get_round_trip(store: HistoryStore) -> None:
    created = await store.create_session("s1", "/work/proj", "code", title="Fix it", metadata={"model": "é-1"})

    loaded = await store.get_session("s1")

    assert loaded == created
    assert (loaded.workspace, loaded.mode, loaded.title, loaded.metadata) == (
        "/work/proj",
        "code",
        "Fix it",
        {"model": "é-1"},
    )
    assert loaded.created_at == loaded.updated_at > 0
    assert await store.get_session("nope") is None


async def test_session_ids_are_unique(store: HistoryStore) -> None:
    await store.create_session("s1", "/w", "code")
    with pytest.raises(StoreError, match="already exists"):
        await store.create_session("s1", "/w", "ask")


async def test_update_sets_only_given_fields_and_bumps_updated_at(store: HistoryStore) -> None:
    before = await store.create_session("s1", "/w", "code", title="old", metadata={"a": 1})

    await store.update_session("s1", mode="ask")
    await store.update_session("s1", metadata={"b": 2})
    after = await store.get_session("s1")

    assert after is not None
    assert (after.title, after.mode, after.metadata) == ("old", "ask", {"b": 2})
    assert after.updated_at >= before.updated_at and after.created_at == before.created_at
    with pytest.raises(StoreError, match="no session 'ghost'"):
        await store.update_session("ghost", title="x")


async def test_list_is_newest_first_and_pages_with_a_cursor(store: HistoryStore) -> None:
    for i in range(7):
        await store.create_session(f"s{i}", "/w", "code")
    await store.update_session("s2", title="touched last")  # moves to the front

    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        page, cursor = await store.list_sessions(limit=3, cursor=cursor)
        pages.append([session.id for session in page])
        if cursor is None:
            break

    assert [len(page) for page in pages] == [3, 3, 1]
    flat = [session_id for page in pages for session_id in page]
    assert flat == ["s2", "s6", "s5", "s4", "s3", "s1", "s0"]
    everything, end = await store.list_sessions()
    assert [session.id for session in everything] == flat and end is None


async def test_exact_fit_page_has_no_cursor(store: HistoryStore) -> None:
    for i in range(3):
        await store.create_session(f"s{i}", "/w", "code")
    page, cursor = await store.list_sessions(limit=3)
    assert len(page) == 3 and cursor is None
    assert await store.list_sessions() == (page, None)


async def test_bad_paging_arguments_are_refused(store: HistoryStore) -> None:
    for bad in ("not-a-cursor!", "", "W10", "WzEsMiwzXQ", "é", "bnVsbA"):  # [] [1,2,3] null
        with pytest.raises(InvalidCursor, match="is not a cursor a session listing returned"):
            await store.list_sessions(cursor=bad)
    with pytest.raises(ValueError):
        await store.list_sessions(limit=0)


async def test_latest_session_follows_activity(store: HistoryStore) -> None:
    assert await store.latest_session() is None
    await store.create_session("older", "/w", "code")
    await store.create_session("newer", "/w", "code")
    await store.begin_turn("older", "t1", MessageRecord("user", {"text": "back to this one"}))

    latest = await store.latest_session()

    assert latest is not None and latest.id == "older"
    # a session opened later and never prompted is not where the user left off
    await store.create_session("empty", "/w", "code")
    latest = await store.latest_session()
    assert latest is not None and latest.id == "older"
    await store.begin_turn("newer", "t2", MessageRecord("user", {"text": "now this"}))
    latest = await store.latest_session()
    assert latest is not None and latest.id == "newer"


async def test_no_latest_session_without_a_conversation(store: HistoryStore) -> None:
    await store.create_session("empty", "/w", "code")
    assert await store.latest_session() is None


async def _session_with_history(store: HistoryStore, session_id: str) -> None:
    await store.create_session(session_id, "/w", "code")
    turn_id = f"{session_id}-t1"
    await store.begin_turn(session_id, turn_id, MessageRecord("user", {"text": "hi"}))
    await store.append_messages(session_id, turn_id, [MessageRecord("assistant", {"text": "hello"})])
    await finish_with_raw_report(store, turn_id, "complete", {"steps": 1})


async def test_delete_cascades_and_spares_other_sessions(store: HistoryStore, query: Query) -> None:
    await _session_with_history(store, "doomed")
    await _session_with_history(store, "kept")

    assert await store.delete_session("doomed") is True
    assert await store.delete_session("doomed") is False

    assert await store.get_session("doomed") is None
    for table in ("turns", "messages", "run_reports"):
        assert query(f"SELECT COUNT(*) FROM {table} WHERE session_id = 'doomed'") == [(0,)], table
        assert query(f"SELECT COUNT(*) FROM {table} WHERE session_id = 'kept'") != [(0,)], table
    assert await store.message_count("kept") == 2
    assert await store.list_reports("kept") == [{"steps": 1}]
