"""The checkpoint of a turn's calls waiting for approval, typed (``PendingApprovals``), through a
real SQLite history: what this Tether writes is byte for byte what earlier ones wrote, and
what they wrote is read back as the same checkpoint."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tether.store import HistoryStore, MessageRecord, StorageFault
from tether.store.snapshots import check_snapshot, export_session
from tether_protocol import CheckpointError, PendingApprovals, PendingCall

if TYPE_CHECKING:
    from pathlib import Path

# What the untyped journal stored (``{"step", "calls": [{"id", "name", "arguments",
# "started"?}]}``, compact, UTF-8 kept): databases and snapshot files hold this text.
OLD_TEXT = (
    '{"step":3,"calls":[{"id":"ca","name":"run_command","arguments":{"command":"echo é >> x"},"started":true},'
    '{"id":"cb","name":"write_file","arguments":{"path":"b.txt","content":"two\\n"}}]}'
)
TYPED = PendingApprovals(
    step=3,
    calls=[
        PendingCall("ca", "run_command", {"command": "echo é >> x"}, started=True),
        PendingCall("cb", "write_file", {"path": "b.txt", "content": "two\n"}),
    ],
)


async def _waiting(store: HistoryStore) -> None:
    await store.create_session("s1", "/w", "ask")
    await store.begin_turn("s1", "t1", MessageRecord("user", {"role": "user", "content": []}))


async def _stored_text(store: HistoryStore) -> str:
    rows = await store.query("SELECT pending FROM turns WHERE id = 't1'")
    text: str = rows[0][0]
    return text


async def test_a_typed_checkpoint_is_stored_as_before_and_read_back(tmp_path: Path) -> None:
    async with await HistoryStore.open(tmp_path / "h.sqlite3") as store:
        await _waiting(store)
        await store.set_pending("t1", TYPED)
        assert await _stored_text(store) == OLD_TEXT
        await store.commit_step("s1", "t1", [], TYPED)  # the other writer: the same bytes
        assert await _stored_text(store) == OLD_TEXT
    # a new daemon (the first one "died": its turn still runs, waiting)
    async with await HistoryStore.open(tmp_path / "h.sqlite3") as store:
        assert await store.waiting_turn("s1") == ("t1", TYPED)


async def test_a_checkpoint_an_earlier_tether_wrote_is_read_back(tmp_path: Path) -> None:
    async with await HistoryStore.open(tmp_path / "h.sqlite3") as store:
        await _waiting(store)
        await store.transaction(lambda conn: conn.execute("UPDATE turns SET pending = ? WHERE id = 't1'", (OLD_TEXT,)))
        waiting = await store.waiting_turn("s1")
        assert waiting == ("t1", TYPED)
        assert waiting[1].call_ids() == {"ca", "cb"} and [c.started for c in waiting[1].calls] == [True, False]
        # and a snapshot carries it as the same JSON, which the snapshot checks accept
        snap = await export_session(store, "s1")
        assert snap["turns"][0]["pending"] == PendingApprovals.from_json(snap["turns"][0]["pending"]).to_json()
        assert PendingApprovals.from_json(check_snapshot(snap)["turns"][0]["pending"]) == TYPED


async def test_a_checkpoint_without_a_step_is_step_one_and_unknown_keys_are_ignored(tmp_path: Path) -> None:
    async with await HistoryStore.open(tmp_path / "h.sqlite3") as store:
        await _waiting(store)
        text = '{"calls":[{"id":"c","name":"n"}],"later":{"x":1}}'
        await store.transaction(lambda conn: conn.execute("UPDATE turns SET pending = ? WHERE id = 't1'", (text,)))
        assert await store.waiting_turn("s1") == ("t1", PendingApprovals(step=1, calls=[PendingCall("c", "n", {})]))


async def test_an_unreadable_stored_checkpoint_names_the_turn_and_the_field(tmp_path: Path) -> None:
    async with await HistoryStore.open(tmp_path / "h.sqlite3") as store:
        await _waiting(store)
        text = '{"step":1,"calls":[{"name":"n","arguments":{}}]}'
        await store.transaction(lambda conn: conn.execute("UPDATE turns SET pending = ? WHERE id = 't1'", (text,)))
        with pytest.raises(StorageFault) as caught:  # answered -32015, with this message
            await store.waiting_turn("s1")
        assert str(caught.value).startswith(
            "turn t1 of session s1 waits for approval of calls that cannot be read from "
            f"{tmp_path / 'h.sqlite3'} (pending.calls[0].id is missing)"
        )
        assert caught.value.path == str(tmp_path / "h.sqlite3")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], " must be an object {step, calls}, not a list"),
        ({"step": True, "calls": []}, ".step must be an integer from 1, not True"),
        ({"step": 1}, ".calls must be a list of the calls still to run, not null"),
        ({"step": 1, "calls": ["c"]}, ".calls[0] must be an object {id, name, arguments}, not a string"),
        ({"step": 1, "calls": [{"id": "c", "name": None}]}, ".calls[0].name must be a string, not null"),
        ({"step": 1, "calls": [{"id": "c", "name": "n", "arguments": []}]}, ".calls[0].arguments must be an object"),
        (
            {"step": 1, "calls": [{"id": "c", "name": "n", "started": "yes"}]},
            ".calls[0].started must be a boolean, not a string",
        ),
    ],
)
def test_a_bad_checkpoint_is_refused_naming_the_field(data: object, message: str) -> None:
    with pytest.raises(CheckpointError) as caught:
        PendingApprovals.from_json(data)
    assert str(caught.value).startswith(message)
