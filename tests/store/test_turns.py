"""The turn lifecycle: begin, step commits, finish with a report, crash recovery."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import pytest

from tether.store import HistoryStore, MessageRecord, StoreError
from tether_protocol import PendingApprovals, PendingCall, RunReport, Usage
from tether_protocol.conversation import AssistantMessage

if TYPE_CHECKING:
    from pathlib import Path

Query = Callable[..., list[Any]]


def report(turn_id: str, steps: int = 0, *, session_id: str = "s1") -> RunReport:
    return RunReport(
        turn_id,
        session_id,
        "scripted",
        "m",
        1.0,
        2.5,
        1500.0,
        "end_turn",
        "complete",
        [],
        steps,
        0,
        Usage(10, 2),
        1.25,
        0.0,
    )


def report_json(turn_id: str, steps: int = 0, *, session_id: str = "s1") -> dict[str, Any]:
    """The report as stored and sent (``_tether/session/report``): camelCase, no null fields."""
    return {
        "turnId": turn_id,
        "sessionId": session_id,
        "provider": "scripted",
        "model": "m",
        "startedAt": 1.0,
        "completedAt": 2.5,
        "totalMs": 1500.0,
        "stopReason": "end_turn",
        "status": "complete",
        "steps": [],
        "stepCount": steps,
        "toolCallCount": 0,
        "totalUsage": {"inputTokens": 10, "outputTokens": 2, "cachedTokens": 0, "cacheWriteTokens": 0},
        "totalLlmMs": 1.25,
        "totalToolMs": 0.0,
    }


@pytest.fixture
async def session(store: HistoryStore) -> str:
    await store.create_session("s1", "/w", "code")
    return "s1"


async def test_a_full_turn_reads_back_in_order(store: HistoryStore, session: str) -> None:
    turn = await store.begin_turn(session, "t1", MessageRecord("user", {"text": "list files"}))
    assert (turn.seq, turn.status, turn.finished_at) == (1, "running", None)

    step1 = await store.append_messages(
        session,
        "t1",
        [
            MessageRecord("assistant", {"tool_calls": [{"id": "c1", "name": "ls"}]}),
            MessageRecord("tool", {"call_id": "c1", "content": "a.py"}),
        ],
    )
    step2 = await store.append_messages(
        session,
        "t1",
        [
            MessageRecord("assistant", {"text": "one file"}, status="cancelled"),
        ],
    )
    await store.finish_turn("t1", "cancelled", "cancelled", report=report("t1", 2))

    assert (step1, step2) == ([1, 2], [3])
    messages = await store.load_messages(session)
    assert [(m.seq, m.role, m.status, m.turn_id) for m in messages] == [
        (0, "user", "complete", "t1"),
        (1, "assistant", "complete", "t1"),
        (2, "tool", "complete", "t1"),
        (3, "assistant", "cancelled", "t1"),
    ]
    assert messages[2].body == {"call_id": "c1", "content": "a.py"}
    assert await store.message_count(session) == 4
    [finished] = await store.list_turns(session)
    assert (finished.status, finished.stop_reason, finished.error) == ("cancelled", "cancelled", None)
    assert finished.finished_at is not None and finished.finished_at >= finished.started_at
    assert await store.get_report("t1") == report_json("t1", 2)


@pytest.mark.parametrize("size", [1, 2, 3, 7, 8, 100])
@pytest.mark.parametrize("first", [None, 1, 2, 7, 9])
async def test_messages_read_a_page_at_a_time_are_all_the_messages(
    store: HistoryStore, session: str, size: int, first: int | None
) -> None:
    await store.begin_turn(session, "t1", MessageRecord("user", {"text": "go"}))
    await store.append_messages(session, "t1", [MessageRecord("assistant", {"text": f"part {i}"}) for i in range(6)])
    pages = [page async for page in store.message_pages(session, size, first)]
    assert 0 < len(pages[0]) <= (size if first is None else first)
    assert all(0 < len(page) <= size for page in pages[1:])
    # 7 messages, in order
    assert [m for page in pages for m in page] == [
        (m.role, m.body, m.status) for m in await store.load_messages(session)
    ]


async def test_leaving_the_pages_early_leaves_the_store_usable(store: HistoryStore, session: str) -> None:
    await store.begin_turn(session, "t1", MessageRecord("user", {"text": "go"}))
    await store.append_messages(session, "t1", [MessageRecord("assistant", {"text": f"part {i}"}) for i in range(6)])
    async with contextlib.aclosing(store.message_pages(session, 2)) as pages:
        first = await anext(pages)  # the next page is being read: dropped
    assert [body for _role, body, _status in first] == [{"text": "go"}, {"text": "part 0"}]
    assert await store.message_count(session) == 7
    await store.append_messages(session, "t1", [MessageRecord("assistant", {"text": "more"})])
    assert len(await store.load_messages(session)) == 8


async def test_turns_number_from_one_and_reports_list_in_turn_order(store: HistoryStore, session: str) -> None:
    for n in (1, 2, 3):
        turn = await store.begin_turn(session, f"t{n}", MessageRecord("user", {"n": n}))
        assert turn.seq == n
        if n != 2:  # a turn without a report leaves no gap in the list
            await store.finish_turn(f"t{n}", "complete", "end_turn", report=report(f"t{n}", n))
    await store.finish_turn("t2", "error", None, error="provider down")

    assert await store.list_reports(session) == [report_json("t1", 1), report_json("t3", 3)]
    assert [(t.seq, t.status, t.error) for t in await store.list_turns(session)] == [
        (1, "complete", None),
        (2, "error", "provider down"),
        (3, "complete", None),
    ]
    assert [m.seq for m in await store.load_messages(session)] == [0, 1, 2]
    assert await store.get_report("t2") is None


async def test_bodies_are_compact_utf8_json(store: HistoryStore, session: str, query: Query) -> None:
    await store.begin_turn(session, "t1", MessageRecord("user", {"text": "héllo ✓", "n": [1, 2]}))
    assert query("SELECT body FROM messages") == [('{"text":"héllo ✓","n":[1,2]}',)]


async def test_the_store_assigns_seq_and_turn_but_keeps_a_given_timestamp(store: HistoryStore, session: str) -> None:
    await store.begin_turn(session, "t1", MessageRecord("user", {}, seq=99, turn_id="bogus", created_at=12.5))
    [message] = await store.load_messages(session)
    assert (message.seq, message.turn_id, message.created_at) == (0, "t1", 12.5)


async def test_bad_writes_are_refused_and_leave_nothing_behind(store: HistoryStore, session: str) -> None:
    await store.create_session("other", "/w", "code")
    await store.begin_turn("other", "foreign", MessageRecord("user", {}))
    await store.begin_turn(session, "t1", MessageRecord("user", {}))

    with pytest.raises(StoreError, match="no session 'ghost'"):
        await store.begin_turn("ghost", "t9", MessageRecord("user", {}))
    with pytest.raises(StoreError, match="turn 't1' already exists"):
        await store.begin_turn(session, "t1", MessageRecord("user", {}))
    with pytest.raises(StoreError, match="no turn 'ghost'"):
        await store.append_messages(session, "ghost", [MessageRecord("assistant", {})])
    with pytest.raises(StoreError, match="belongs to session 'other'"):
        await store.append_messages(session, "foreign", [MessageRecord("assistant", {})])
    with pytest.raises(ValueError, match="role"):
        await store.append_messages(session, "t1", [MessageRecord("robot", {})])
    with pytest.raises(ValueError, match="a turn finishes as one of"):
        await store.finish_turn("t1", "running", None)
    with pytest.raises(StoreError, match="no turn 'ghost'"):
        await store.finish_turn("ghost", "complete", None)

    assert await store.append_messages(session, "t1", []) == []
    assert await store.message_count(session) == 1
    assert [t.id for t in await store.list_turns(session)] == ["t1"]


async def test_reopening_after_a_crash_interrupts_running_turns_and_keeps_messages(db_path: Path) -> None:
    async with await HistoryStore.open(db_path) as store:
        await store.create_session("s1", "/w", "code")
        await store.begin_turn("s1", "done", MessageRecord("user", {"text": "first"}))
        await store.finish_turn("done", "complete", "end_turn")
        await store.begin_turn("s1", "cut", MessageRecord("user", {"text": "second"}))
        [last_seq] = await store.append_messages("s1", "cut", [MessageRecord("assistant", {"text": "half"})])
        # no finish_turn: the daemon "died" here

    async with await HistoryStore.open(db_path, recover=False) as observer:
        assert observer.recovered_turns == 0  # a read-only peer leaves a live daemon's turn alone
        assert [t.status for t in await observer.list_turns("s1")] == ["complete", "running"]

    async with await HistoryStore.open(db_path) as store:
        # this process owns the turn and is alive: another daemon must leave it alone
        assert store.recovered_turns == 0
    _set_owner(db_path, "cut", "999999999:1")  # the owning daemon is gone

    async with await HistoryStore.open(db_path) as store:
        assert store.recovered_turns == 1
        done, cut = await store.list_turns("s1")
        messages = await store.load_messages("s1")
        assert (done.status, cut.status) == ("complete", "interrupted")
        # it stopped when its last message was committed, not when we restarted
        assert cut.finished_at == messages[-2].created_at
        assert [(m.seq, m.body, m.status) for m in messages[1:]] == [
            (1, {"text": "second"}, "complete"),
            (last_seq, {"text": "half"}, "complete"),
            # nothing streamed was saved: an empty answer marks where it stopped
            (last_seq + 1, {"role": "assistant", "text": ""}, "interrupted"),
        ]

    async with await HistoryStore.open(db_path) as store:
        assert store.recovered_turns == 0


async def test_a_cancelled_writer_does_not_wedge_the_connection(store: HistoryStore, session: str) -> None:
    await store.begin_turn(session, "t1", MessageRecord("user", {}))
    cancelled = 0
    for depth in range(8):
        task = asyncio.create_task(store.append_messages(session, "t1", [MessageRecord("assistant", {})]))
        for _ in range(depth):  # cancel at a different point of the write each time
            await asyncio.sleep(0)
        task.cancel()
        try:
            await task  # the write runs in one trip to SQLite's thread: a late cancel finds it done
        except asyncio.CancelledError:
            cancelled += 1
    assert cancelled >= 2  # before the write began, and while it waited for the thread

    # whatever the cancelled writes managed, nothing is half-applied or left open
    await store.append_messages(session, "t1", [MessageRecord("assistant", {"text": "after"})])
    seqs = [m.seq for m in await store.load_messages(session)]
    assert seqs == list(range(len(seqs)))


async def test_anyio_cancel_scopes_cut_between_whole_steps(store: HistoryStore, session: str) -> None:
    # the agent loop cancels turns with anyio scopes, which re-cancel on every await
    await store.begin_turn(session, "t1", MessageRecord("user", {}))
    step = [MessageRecord("assistant", {}), MessageRecord("tool", {})]
    for delay in (0, 0.0002, 0.0005, 0.001):
        with anyio.move_on_after(delay):
            while True:
                await store.append_messages(session, "t1", step)

    messages = await store.load_messages(session)
    assert [m.seq for m in messages] == list(range(len(messages)))
    assert len(messages) % 2 == 1  # the user message plus whole steps only


async def test_a_closed_store_says_so(db_path: Path) -> None:
    store = await HistoryStore.open(db_path)
    await store.close()
    await store.close()  # idempotent
    with pytest.raises(StoreError, match="is closed"):
        await store.get_session("s1")
    with pytest.raises(StoreError, match="is closed"):
        await store.create_session("s1", "/w", "code")


def _set_owner(db_path: Path, turn_id: str, owner: str) -> None:
    import sqlite3

    conn = sqlite3.connect(db_path)
    conn.execute("UPDATE turns SET owner = ? WHERE id = ?", (owner, turn_id))
    conn.commit()
    conn.close()


async def test_a_dead_daemons_partial_output_is_kept_and_a_waiting_turn_waits(db_path: Path) -> None:
    async with await HistoryStore.open(db_path) as store:
        await store.create_session("s1", "/w", "ask")
        await store.begin_turn("s1", "streaming", MessageRecord("user", {"text": "go"}))
        await store.save_partial("streaming", AssistantMessage("half an ans"))
        await store.begin_turn("s1", "waiting", MessageRecord("user", {"text": "edit"}))
        await store.set_pending("waiting", PendingApprovals(step=1, calls=[PendingCall("c1", "edit_file")]))
    _set_owner(db_path, "streaming", "999999999:1")
    _set_owner(db_path, "waiting", "999999999:1")

    async with await HistoryStore.open(db_path) as store:
        assert store.recovered_turns == 1
        statuses = {t.id: t.status for t in await store.list_turns("s1")}
        assert statuses == {"streaming": "interrupted", "waiting": "running"}
        kept = [m for m in await store.load_messages("s1") if m.role == "assistant"]
        assert [(m.body["text"], m.status, m.turn_id) for m in kept] == [("half an ans", "interrupted", "streaming")]
        waiting = await store.waiting_turn("s1")
        assert waiting is not None and waiting[0] == "waiting" and waiting[1].calls[0].id == "c1"
        await store.finish_turn("waiting", "complete", "end_turn")
        assert await store.waiting_turn("s1") is None


async def test_a_step_and_its_waiting_calls_commit_together(store: HistoryStore, session: str) -> None:
    """`commit_step`: the step's messages, the calls still waiting (or none) and the
    cleared partial are one transaction. A kill between them used to leave a result stored
    while its call still waited, to be run again by the next daemon."""
    await store.begin_turn(session, "t1", MessageRecord("user", {"text": "write two files"}))
    await store.save_partial("t1", AssistantMessage("Writ"))
    waiting = PendingApprovals(step=1, calls=[PendingCall("b", "write_file")])
    await store.commit_step(
        session,
        "t1",
        [
            MessageRecord("assistant", {"text": "Writing.", "tool_calls": [{"id": "a"}, {"id": "b"}]}),
            MessageRecord("tool", {"tool_call_id": "a", "content": "ok"}),
        ],
        waiting,
    )
    assert await store.waiting_turn(session) == ("t1", waiting)
    assert (await store.query("SELECT partial FROM turns WHERE id = 't1'")) == [(None,)]

    # the calls' update fails: the step's messages are not stored either
    await store.transaction(
        lambda conn: conn.execute(
            "CREATE TEMP TRIGGER no_clear BEFORE UPDATE OF pending ON main.turns WHEN NEW.pending IS NULL"
            " BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )
    )
    with pytest.raises(StoreError, match="refused"):
        await store.commit_step(session, "t1", [MessageRecord("tool", {"tool_call_id": "b", "content": "ok"})], None)
    assert [m.seq for m in await store.load_messages(session)] == [0, 1, 2]
    assert await store.waiting_turn(session) == ("t1", waiting)
    await store.transaction(lambda conn: conn.execute("DROP TRIGGER temp.no_clear"))
    assert await store.commit_step(
        session, "t1", [MessageRecord("tool", {"tool_call_id": "b", "content": "ok"})], None
    ) == [3]
    assert await store.waiting_turn(session) is None


async def test_only_one_daemon_claims_a_waiting_turn(store: HistoryStore, session: str) -> None:
    """Two daemons that load a session after a crash both find its waiting turn; claiming
    it is one transaction that a live owner wins, so only one resumes it (both ran the
    approved command before)."""
    from tether.store.liveness import _start_ticks, this_process

    await store.begin_turn(session, "t1", MessageRecord("user", {"text": "run it"}))
    await store.set_pending("t1", PendingApprovals(step=1, calls=[PendingCall("c", "run_command")]))

    async def owner(value: str | None) -> None:
        await store.transaction(lambda conn: conn.execute("UPDATE turns SET owner = ? WHERE id = 't1'", (value,)))

    other = os.getppid()  # a live process that is not this one: another daemon
    await owner(f"{other}:{_start_ticks(other)}")
    assert await store.claim_turn("t1") is False
    await owner("999999999:1")  # a daemon that died
    assert await store.claim_turn("t1") is True
    assert await store.query("SELECT owner FROM turns WHERE id = 't1'") == [(this_process(),)]
    assert await store.claim_turn("t1") is True  # it is ours now
    await store.set_pending("t1", None)
    assert await store.claim_turn("t1") is False  # nothing waits any more


async def test_no_turn_begins_while_another_live_daemon_runs_one_in_the_session(
    store: HistoryStore, session: str
) -> None:
    """Its messages would interleave with the other daemon's turn (seqs taken in turns)."""
    from tether.store import TurnElsewhere
    from tether.store.liveness import _start_ticks

    await store.begin_turn(session, "t1", MessageRecord("user", {"text": "run it"}))
    other = os.getppid()  # a live process that is not this one: another daemon
    await store.transaction(
        lambda conn: conn.execute("UPDATE turns SET owner = ? WHERE id = 't1'", (f"{other}:{_start_ticks(other)}",))
    )
    with pytest.raises(TurnElsewhere) as refused:
        await store.begin_turn(session, "t2", MessageRecord("user", {"text": "me too"}))
    assert (refused.value.turn_id, refused.value.pid) == ("t1", str(other))
    assert [m.seq for m in await store.load_messages(session)] == [0]  # nothing of t2 stored
    assert await store.turn_elsewhere(session) == ("t1", None, str(other))
    await store.transaction(lambda conn: conn.execute("UPDATE turns SET owner = '999999999:1' WHERE id = 't1'"))
    assert await store.turn_elsewhere(session) is None  # that daemon died
    await store.begin_turn(session, "t2", MessageRecord("user", {"text": "me too"}))
