"""The store's queries a rewind asks before it plans (``store/checkpoints.py``), on a real database.

Each answer is scoped to its session: a second session with the same turn numbers and
message seqs is always present, so a query that forgot its ``session_id`` would fail here.
"""

from __future__ import annotations

import pytest

from tether.store import HistoryStore, MessageRecord
from tether.store import checkpoints as cp


async def _two_turns(store: HistoryStore, session_id: str) -> None:
    """Turn 1: user (seq 0), assistant (1), tool (2); turn 2: user (3), assistant (4)."""
    await store.create_session(session_id, "/w", "code")
    await store.begin_turn(session_id, f"{session_id}-t1", MessageRecord("user", {"text": "first"}))
    await store.append_messages(
        session_id,
        f"{session_id}-t1",
        [
            MessageRecord("assistant", {"tool_calls": [{"id": "c1", "name": "ls"}]}),
            MessageRecord("tool", {"call_id": "c1", "content": "a.py"}),
        ],
    )
    await store.finish_turn(f"{session_id}-t1", "complete", "end_turn")
    await store.begin_turn(session_id, f"{session_id}-t2", MessageRecord("user", {"text": "second"}))
    await store.append_messages(session_id, f"{session_id}-t2", [MessageRecord("assistant", {"text": "done"})])


@pytest.fixture
async def sessions(store: HistoryStore) -> HistoryStore:
    await _two_turns(store, "s1")
    await _two_turns(store, "s2")
    await store.finish_turn("s2-t2", "complete", "end_turn")  # s1's turn 2 is left running
    return store


async def test_a_turns_start_is_the_seq_of_its_first_message(sessions: HistoryStore) -> None:
    assert await cp.turn_start_seq(sessions, "s1", 1) == 0
    assert await cp.turn_start_seq(sessions, "s1", 2) == 3
    assert await cp.turn_start_seq(sessions, "s1", 3) is None  # no such turn
    assert await cp.turn_start_seq(sessions, "s1", 0) is None  # turns number from 1
    assert await cp.turn_start_seq(sessions, "nobody", 1) is None


async def test_a_messages_role_is_read_by_session_and_seq(sessions: HistoryStore) -> None:
    roles = [await cp.message_role(sessions, "s1", seq) for seq in range(5)]
    assert roles == ["user", "assistant", "tool", "user", "assistant"]
    assert await cp.message_role(sessions, "s1", 5) is None
    assert await cp.message_role(sessions, "s1", -1) is None
    assert await cp.message_role(sessions, "nobody", 0) is None


async def test_a_running_turn_is_seen_only_in_its_own_session(sessions: HistoryStore) -> None:
    assert await cp.turn_running(sessions, "s1") is True
    assert await cp.turn_running(sessions, "s2") is False
    await sessions.finish_turn("s1-t2", "cancelled", "cancelled")
    assert await cp.turn_running(sessions, "s1") is False
    assert await cp.turn_running(sessions, "nobody") is False


async def test_the_last_rewind_id_follows_the_sessions_own_rewinds(sessions: HistoryStore) -> None:
    await sessions.finish_turn("s1-t2", "complete", "end_turn")  # a rewind is refused while a turn runs
    assert await cp.last_rewind_id(sessions, "s1") == 0

    async def rewind_to(session_id: str, seq: int) -> int:
        at_seq = await cp.next_seq(sessions, session_id)
        hidden = cp.ranges_of(range(seq, at_seq))
        return await cp.apply_rewind(
            sessions, session_id, cp.NewRewind(at_seq, seq, "conversation", [], hidden, (), {})
        )

    first = await rewind_to("s1", 3)
    assert await cp.last_rewind_id(sessions, "s1") == first
    other = await rewind_to("s2", 0)
    assert other > first
    assert await cp.last_rewind_id(sessions, "s1") == first  # s2's rewind is not s1's
    second = await rewind_to("s1", 0)
    assert await cp.last_rewind_id(sessions, "s1") == second > other
    assert [r.id for r in await cp.rewinds(sessions, "s1")] == [first, second]
    await sessions.delete_session("s1")
    assert await cp.last_rewind_id(sessions, "s1") == 0
