"""Session snapshots: export, import (with format upgrades), fork; real SQLite files, no mocks."""

from __future__ import annotations

import asyncio
import copy
import json
import sqlite3
import tempfile
import uuid
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether.store import (
    SNAPSHOT_VERSION,
    HistoryStore,
    MessageRecord,
    SnapshotError,
    StoreError,
    export_session,
    fork_session,
    import_session,
    search,
    snapshots,
)
from tether.store.snapshots import check_snapshot, export_session_json

from .conftest import finish_with_raw_report, set_raw_pending
from .test_turns import report_json

JSONRPC = {"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {"sessionId": "x"}}
# a waiting turn's checkpoint, with stored protocol data nested in it
PENDING = {"step": 1, "calls": [{"id": "c2", "name": "delete_file", "arguments": {}}], "nested": JSONRPC}


async def _sample(store: HistoryStore, session_id: str = "s1") -> str:
    """Two turns: a finished one with a tool call and a report, then one waiting for approval."""
    await store.create_session(session_id, "/w", "ask", title="Fix the bug", metadata={"k": [1, "é"]})
    await store.begin_turn(
        session_id,
        "t1",
        MessageRecord(
            "user",
            {
                "role": "user",
                "content": [{"type": "text", "text": "read the README"}],
                "_meta": {"raw": JSONRPC},
            },
        ),
    )
    await store.append_messages(
        session_id,
        "t1",
        [
            MessageRecord(
                "assistant",
                {
                    "role": "assistant",
                    "text": "Reading.",
                    "thinking": "hm",
                    "tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "README.md"}}],
                },
            ),
            MessageRecord(
                "tool",
                {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "# Sample", "is_error": False},
            ),
            MessageRecord("assistant", {"role": "assistant", "text": "It says hello."}),
        ],
    )
    await finish_with_raw_report(store, "t1", "complete", report_json("t1", 2, session_id=session_id))
    await store.begin_turn(
        session_id,
        "t2",
        MessageRecord(
            "user",
            {
                "role": "user",
                "content": [{"type": "text", "text": "now delete it"}],
            },
        ),
    )
    await store.append_messages(
        session_id,
        "t2",
        [
            MessageRecord(
                "assistant",
                {
                    "role": "assistant",
                    "text": "",
                    "tool_calls": [{"id": "c2", "name": "delete_file", "arguments": {}}],
                },
            )
        ],
    )
    await set_raw_pending(store, "t2", PENDING)  # with a key a later Tether might add
    await store.rules.add("execute", "npm test", "allow")
    return session_id


async def test_export_has_the_whole_session(store: HistoryStore) -> None:
    await _sample(store)
    snap = await export_session(store, "s1")

    assert snap["tether_snapshot"] == SNAPSHOT_VERSION == 1
    assert isinstance(snap["exported_at"], float)
    assert snap["session"] | {"created_at": 0, "updated_at": 0} == {
        "id": "s1",
        "workspace": "/w",
        "title": "Fix the bug",
        "mode": "ask",
        "created_at": 0,
        "updated_at": 0,
        "metadata": {"k": [1, "é"]},
    }
    assert [(t["id"], t["seq"], t["status"], t["stop_reason"]) for t in snap["turns"]] == [
        ("t1", 1, "complete", "end_turn"),
        ("t2", 2, "running", None),
    ]
    assert "pending" not in snap["turns"][0]
    assert snap["turns"][1]["pending"] == PENDING
    assert snap["pending"] == {"turn_id": "t2", "approvals": snap["turns"][1]["pending"]}
    assert [(m["seq"], m["turn_id"], m["role"], m["status"]) for m in snap["messages"]] == [
        (0, "t1", "user", "complete"),
        (1, "t1", "assistant", "complete"),
        (2, "t1", "tool", "complete"),
        (3, "t1", "assistant", "complete"),
        (4, "t2", "user", "complete"),
        (5, "t2", "assistant", "complete"),
    ]
    assert snap["messages"][0]["body"]["_meta"]["raw"] == JSONRPC
    assert snap["reports"] == [{"turn_id": "t1", "report": report_json("t1", 2)}]
    assert snap["rules"] == [{"kind": "execute", "pattern": "npm test", "decision": "allow"}]
    json.dumps(snap)  # JSON-able as is


async def test_export_of_an_unknown_session_is_a_store_error(store: HistoryStore) -> None:
    with pytest.raises(StoreError, match="no session 'nope'"):
        await export_session(store, "nope")


async def test_import_with_a_new_id_maps_turn_ids_everywhere(store: HistoryStore, tmp_path: Path) -> None:
    await _sample(store)
    snap = await export_session(store, "s1")
    new_id = await import_session(store, snap)

    assert new_id.startswith("sess_") and len(new_id) == 5 + 32
    again = await export_session(store, new_id)
    turn_ids = [t["id"] for t in again["turns"]]
    assert not {"t1", "t2"} & set(turn_ids)
    assert [m["turn_id"] for m in again["messages"]] == [turn_ids[0]] * 4 + [turn_ids[1]] * 2
    assert again["reports"] == [{"turn_id": turn_ids[0], "report": report_json(turn_ids[0], 2, session_id=new_id)}]
    # the copy does not wait for the original's approval: that turn is interrupted in it
    assert [(t["status"], "pending" in t) for t in again["turns"]] == [("complete", False), ("interrupted", False)]
    assert again["turns"][1]["finished_at"] == snap["messages"][-1]["created_at"]
    assert again["pending"] is None
    record = await store.get_session(new_id)
    assert record is not None and record.created_at == snap["session"]["created_at"]
    assert record.updated_at > snap["session"]["updated_at"]
    # the store API sees a normal session: the next turn continues the numbering
    turn = await store.begin_turn(new_id, "t9", MessageRecord("user", {"role": "user", "content": []}))
    assert turn.seq == 3 and [m.seq for m in await store.load_messages(new_id)][-1] == 6
    # and the original is untouched
    assert (await export_session(store, "s1"))["turns"] == snap["turns"]


@pytest.mark.parametrize("gaps", [False, True], ids=["ids in a row", "ids with gaps"])
async def test_a_restored_session_is_searchable_at_its_own_messages(store: HistoryStore, gaps: bool) -> None:
    """The search index rows of a restore name the messages they index: whether the new
    messages got ids in a row (as SQLite numbers one INSERT) or with gaps (here: a trigger
    that writes a message of another session after each one)."""
    await _sample(store)
    snap = await export_session(store, "s1")
    if gaps:
        await store.transaction(
            lambda conn: conn.execute(
                "CREATE TEMP TRIGGER skip_ids AFTER INSERT ON main.messages WHEN NEW.session_id <> 's1' BEGIN"
                " INSERT INTO messages (session_id, seq, role, body, created_at)"
                " VALUES ('s1', NEW.id + 1000, 'system', '{}', 0); END"
            )
        )
    new_id = await import_session(store, snap)
    rows = await store.query("SELECT id FROM messages WHERE session_id = ? ORDER BY seq", (new_id,))
    ids = [row[0] for row in rows]
    assert (ids[-1] - ids[0] + 1 > len(ids)) is gaps

    for words, seq in (("README", 0), ("Sample", 2), ("hello", 3), ("delete", 4)):
        hits = [(h.message_seq, h.snippet) for h in await search(store, words) if h.session_id == new_id]
        assert len(hits) == 1 and hits[0][0] == seq and f"[[{words}]]" in hits[0][1], (words, hits)


async def test_keep_id_refuses_an_existing_session_and_works_elsewhere(store: HistoryStore, tmp_path: Path) -> None:
    await _sample(store)
    snap = await export_session(store, "s1")
    with pytest.raises(SnapshotError, match="session 's1' already exists in this workspace"):
        await import_session(store, snap, keep_id=True)

    async with await HistoryStore.open(tmp_path / "other.sqlite3") as other:
        assert await import_session(other, snap, keep_id=True, workspace="/elsewhere") == "s1"
        copied = await export_session(other, "s1")
        assert [t["id"] for t in copied["turns"]] == ["t1", "t2"]
        assert copied["session"]["workspace"] == "/elsewhere"
        assert copied["reports"] == snap["reports"]
        assert await other.rules.list() == []  # rules are not imported silently


async def test_new_id_is_used_and_rules_are_imported_only_when_asked(store: HistoryStore, tmp_path: Path) -> None:
    await _sample(store)
    snap = await export_session(store, "s1")
    async with await HistoryStore.open(tmp_path / "other.sqlite3") as other:
        assert await import_session(other, snap, new_id="mine", import_rules=True) == "mine"
        assert [(r.tool_kind, r.pattern, r.decision) for r in await other.rules.list()] == [
            ("execute", "npm test", "allow")
        ]


async def test_a_failed_import_leaves_nothing_behind(store: HistoryStore) -> None:
    await _sample(store)
    snap = await export_session(store, "s1")
    # turn ids are global: keeping them while renaming the session collides with s1's turns
    snap["session"]["id"] = "s2"
    with pytest.raises(SnapshotError, match="a turn of session 's2' already exists"):
        await import_session(store, snap, keep_id=True)
    assert await store.get_session("s2") is None


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda s: s.pop("tether_snapshot"), 'the "tether_snapshot" version field is missing'),
        (lambda s: s.update(tether_snapshot="1"), '"tether_snapshot" must be an integer version'),
        (
            lambda s: s.update(tether_snapshot=99),
            "snapshot version 99 is not supported (written by a newer tether; upgrade tether); "
            "this tether reads versions 1",
        ),
        (lambda s: s.update(tether_snapshot=0), "snapshot version 0 is not supported; this tether reads versions 1"),
        (lambda s: s.pop("session"), '"session" must be an object, not null'),
        (lambda s: s["session"].update(id=""), "session.id must not be empty"),
        (lambda s: s["session"].update(mode=3), "session.mode must be a string, not int"),
        (lambda s: s.update(messages={}), '"messages" must be a list, not an object'),
        (lambda s: s["messages"][1].update(role="robot"), "messages[1].role must be one of"),
        (lambda s: s["messages"][1].update(seq=0), "messages[1].seq must be greater than 0"),
        (lambda s: s["messages"][2].update(turn_id="t7"), "messages[2].turn_id 't7' is not one of the turns"),
        (lambda s: s["messages"][0].update(body=[]), "messages[0].body must be an object, not a list"),
        (lambda s: s["messages"][0].update(created_at=True), "messages[0].created_at must be a number"),
        (lambda s: s["turns"][1].update(seq=1), "turns[1].seq 1 appears twice"),
        (lambda s: s["turns"][0].update(status="done"), "turns[0].status must be one of"),
        (lambda s: s["reports"].append(dict(s["reports"][0])), "reports[1]: turn 't1' has two reports"),
        (lambda s: s["rules"][0].update(decision="maybe"), "rules[0].decision must be one of"),
        (lambda s: s["messages"][1].update(seq=True), "messages[1].seq must be an integer, not a boolean"),
        (lambda s: s["messages"][1].update(seq=1.0), "messages[1].seq must be an integer, not float"),
        (lambda s: s["messages"][1].pop("role"), "messages[1].role must be one of"),
        (lambda s: s["messages"][1].update(role=["user"]), "messages[1].role must be one of"),
        (lambda s: s["messages"][1].update(status=None), "messages[1].status must be one of"),
        (lambda s: s["messages"][1].pop("created_at"), "messages[1].created_at is missing"),
        (lambda s: s["messages"][1].update(body=None), "messages[1].body must be an object, not null"),
        (lambda s: s["messages"][1].update(turn_id=5), "messages[1].turn_id must be a string or null, not int"),
        (lambda s: s["messages"].__setitem__(1, "hello"), "messages[1] must be an object, not a string"),
        (lambda s: s["turns"][1].update(id=s["turns"][0]["id"]), "turns[1].id 't1' appears twice"),
        (lambda s: s["turns"][0].update(seq=False), "turns[0].seq must be an integer, not a boolean"),
        (lambda s: s["turns"][0].update(started_at=True), "turns[0].started_at must be a number"),
        (lambda s: s["turns"][0].update(finished_at="soon"), "turns[0].finished_at must be a number"),
        (lambda s: s["turns"][0].update(stop_reason=1), "turns[0].stop_reason must be a string or null"),
        (lambda s: s["turns"][0].update(error={}), "turns[0].error must be a string or null"),
        (lambda s: s["turns"][1].update(pending=[]), "turns[1].pending must be an object or null, not a list"),
        (lambda s: s["turns"][0].pop("status"), "turns[0].status must be one of"),
        # numbers SQLite could not store, or that would break the session afterwards
        (
            lambda s: s["messages"][1].update(seq=2**63),
            f"messages[1].seq must be between 0 and {2**52 - 1}, not {2**63}",
        ),
        (
            lambda s: s["messages"][5].update(seq=2**52),
            f"messages[5].seq must be between 0 and {2**52 - 1}, not {2**52}",
        ),
        (lambda s: s["turns"][1].update(seq=2**63), f"turns[1].seq must be between 0 and {2**52 - 1}, not {2**63}"),
        (
            lambda s: s["messages"][0].update(created_at=float("nan")),
            "messages[0].created_at must be seconds since the epoch, from 0 to below 1e+11, not nan",
        ),
        (
            lambda s: s["messages"][0].update(created_at=2**63),
            f"messages[0].created_at must be seconds since the epoch, from 0 to below 1e+11, not {2**63}",
        ),
        (
            lambda s: s["turns"][0].update(started_at=float("inf")),
            "turns[0].started_at must be seconds since the epoch",
        ),
        (
            lambda s: s["session"].update(updated_at=-1),
            "session.updated_at must be seconds since the epoch, from 0 to below 1e+11, not -1",
        ),
        # bodies replay, search and the model rely on
        (
            lambda s: s["messages"][0]["body"].update(content=5),
            "messages[0].body.content must be a list of content blocks, not int",
        ),
        (
            lambda s: s["messages"][0]["body"].update(content=["x"]),
            "messages[0].body.content[0] must be an object, not a string",
        ),
        (
            lambda s: s["messages"][1]["body"].update(tool_calls=["x"]),
            "messages[1].body.tool_calls[0] must be an object {id, name, arguments}, not a string",
        ),
        (lambda s: s["messages"][1]["body"]["tool_calls"][0].pop("id"), "messages[1].body.tool_calls[0].id is missing"),
        (
            lambda s: s["messages"][1]["body"]["tool_calls"][0].update(arguments=[]),
            "messages[1].body.tool_calls[0].arguments must be an object, not a list",
        ),
        (
            lambda s: s["messages"][2]["body"].update(tool_call_id=["x"]),
            "messages[2].body.tool_call_id must be a string, not a list",
        ),
        (lambda s: s["messages"][3]["body"].update(text=5), "messages[3].body.text must be a string, not int"),
        (
            lambda s: s["turns"][1].update(pending={"calls": "x"}),
            "turns[1].pending.calls must be a list of the calls still to run, not a string",
        ),
        (lambda s: s["turns"][1]["pending"].update(step=0), "turns[1].pending.step must be an integer from 1, not 0"),
    ],
)
async def test_bad_snapshots_are_refused_with_a_clear_message(store: HistoryStore, mutate: Any, message: str) -> None:
    await _sample(store)
    snap = await export_session(store, "s1")
    mutate(snap)
    with pytest.raises(SnapshotError) as caught:
        await import_session(store, snap)
    assert message in str(caught.value)
    assert len((await store.list_sessions())[0]) == 1


@pytest.mark.parametrize("checked", [False, True], ids=["streamed", "checked-first"])
async def test_the_first_mistake_is_named_though_bodies_are_checked_many_at_once(
    store: HistoryStore, checked: bool
) -> None:
    """Bodies are decoded a batch at a time: a wrong body before a wrong record field is
    still the one named, and a wrong body is named by its own index."""
    await _sample(store)
    snap = await export_session(store, "s1")
    call_id = snap["messages"][1]["body"]["tool_calls"][0].pop("id")
    snap["messages"][3].update(created_at="soon")
    with pytest.raises(SnapshotError, match=r"messages\[1\]\.body\.tool_calls\[0\]\.id is missing"):
        if checked:
            check_snapshot(snap)
        else:
            await import_session(store, snap)
    snap["messages"][1]["body"]["tool_calls"][0]["id"] = call_id
    snap["messages"][3].update(created_at=1.0)
    snap["messages"][3]["body"]["thinking"] = 7
    with pytest.raises(SnapshotError, match=r"messages\[3\]\.body\.thinking must be a string, not int"):
        await import_session(store, snap)
    assert len((await store.list_sessions())[0]) == 1


async def test_fields_nobody_relies_on_are_kept_as_they_are(store: HistoryStore) -> None:
    await _sample(store)
    snap = await export_session(store, "s1")
    snap["messages"][0]["body"]["content"][0]["x-editor"] = {"cursor": 3}
    snap["messages"][1]["body"]["tool_calls"][0]["x"] = None
    snap["messages"][2]["body"]["content"] = {"structured": True}  # replay shows it as JSON
    snap["messages"][1]["extra"] = 1
    copy_id = await import_session(store, snap)
    again = await export_session(store, copy_id)
    assert again["messages"][0]["body"]["content"][0]["x-editor"] == {"cursor": 3}
    assert again["messages"][2]["body"]["content"] == {"structured": True}


async def test_not_an_object_is_refused(store: HistoryStore) -> None:
    with pytest.raises(SnapshotError, match="a snapshot must be a JSON object, not a list"):
        await import_session(store, [])


async def test_an_older_version_is_upgraded_through_the_migrations(
    store: HistoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A made-up version 0 (one flat "conversation" list) upgrades to version 1 on import."""

    def v0_to_v1(old: dict[str, Any]) -> dict[str, Any]:
        return {
            "tether_snapshot": 1,
            "session": {
                "id": old["id"],
                "workspace": old["cwd"],
                "mode": "ask",
                "created_at": old["time"],
                "updated_at": old["time"],
            },
            "turns": [],
            "messages": [
                {
                    "seq": i,
                    "turn_id": None,
                    "role": role,
                    "status": "complete",
                    "created_at": old["time"],
                    "body": {"role": role, "content": [{"type": "text", "text": text}]}
                    if role == "user"
                    else {"role": role, "text": text},
                }
                for i, (role, text) in enumerate(old["conversation"])
            ],
            "reports": [],
        }

    old = {
        "tether_snapshot": 0,
        "id": "old",
        "cwd": "/w",
        "time": 5.0,
        "conversation": [["user", "hello"], ["assistant", "hi"]],
    }
    with pytest.raises(SnapshotError, match="snapshot version 0 is not supported"):
        await import_session(store, old)
    monkeypatch.setattr(snapshots, "MIGRATIONS", {0: v0_to_v1})
    with pytest.raises(SnapshotError, match="snapshot version -1 is not supported; this tether reads versions 0, 1"):
        await import_session(store, {**old, "tether_snapshot": -1})

    new_id = await import_session(store, old)
    snap = await export_session(store, new_id)
    assert [m["body"] for m in snap["messages"]] == [
        {"role": "user", "content": [{"type": "text", "text": "hello"}]},
        {"role": "assistant", "text": "hi"},
    ]
    assert snap["session"]["title"] is None and snap["session"]["metadata"] == {}
    assert old["tether_snapshot"] == 0  # the caller's dict is not changed


async def test_a_migration_that_does_not_upgrade_is_caught(
    store: HistoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshots, "MIGRATIONS", {0: lambda s: s})
    with pytest.raises(SnapshotError, match="the migration of snapshot version 0 did not upgrade it"):
        await import_session(store, {"tether_snapshot": 0})


async def test_fork_copies_up_to_a_message(store: HistoryStore) -> None:
    await _sample(store)
    fork_id = await fork_session(store, "s1", upto_seq=2)

    snap = await export_session(store, fork_id)
    assert snap["session"]["title"] == "Fix the bug (fork)"
    assert snap["session"]["mode"] == "ask" and snap["session"]["metadata"] == {"k": [1, "é"]}
    assert [m["seq"] for m in snap["messages"]] == [0, 1, 2]
    assert [t["seq"] for t in snap["turns"]] == [1]
    assert snap["reports"][0]["report"]["sessionId"] == fork_id
    original = await store.get_session("s1")
    assert original is not None and snap["session"]["created_at"] > original.created_at


async def test_fork_of_everything_interrupts_a_waiting_turn(store: HistoryStore) -> None:
    await _sample(store)
    fork_id = await fork_session(store, "s1", new_id="forked")
    assert fork_id == "forked"
    snap = await export_session(store, fork_id)
    assert len(snap["messages"]) == 6
    assert [t["status"] for t in snap["turns"]] == ["complete", "interrupted"]
    assert snap["pending"] is None and "pending" not in snap["turns"][1]
    assert snap["turns"][1]["finished_at"] == snap["messages"][-1]["created_at"]
    assert await store.waiting_turn("forked") is None
    assert await store.waiting_turn("s1") is not None


async def test_fork_of_a_missing_message_or_session_fails(store: HistoryStore) -> None:
    await _sample(store)
    with pytest.raises(SnapshotError, match=r"session 's1' has no message 9 to fork at \(its messages: 0..5\)"):
        await fork_session(store, "s1", upto_seq=9)
    with pytest.raises(StoreError, match="no session 'nope'"):
        await fork_session(store, "nope")


async def test_fork_into_another_store(store: HistoryStore, tmp_path: Path) -> None:
    await _sample(store)
    async with await HistoryStore.open(tmp_path / "other.sqlite3") as other:
        fork_id = await fork_session(store, "s1", into=other, workspace="/other")
        record = await other.get_session(fork_id)
        assert record is not None and record.workspace == "/other"
        assert await other.message_count(fork_id) == 6
        assert await store.get_session(fork_id) is None


# -- the round trip, for generated sessions -----------------------------------------

_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)
_meta = st.fixed_dictionaries({"raw": st.just(JSONRPC)}, optional={"x": _json})
_status = st.sampled_from(["complete", "incomplete", "cancelled", "interrupted", "error"])


@st.composite
def _step(draw: st.DrawFn) -> list[tuple[dict[str, Any], str]]:
    calls = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "id": st.uuids().map(str),
                    "name": _text,
                    "arguments": st.dictionaries(_text, _json, max_size=2),
                }
            ),
            max_size=2,
        )
    )
    assistant: dict[str, Any] = {"role": "assistant", "text": draw(_text), "_meta": draw(_meta)}
    if calls:
        assistant["tool_calls"] = calls
    if draw(st.booleans()):
        assistant["thinking"] = draw(_text)
    status = draw(_status)
    out = [(assistant, status)]
    for call in calls:
        out.append(
            (
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "name": call["name"],
                    "content": draw(_text),
                    "is_error": draw(st.booleans()),
                },
                status,
            )
        )
    if draw(st.booleans()):
        out.append(({"role": "system", "content": draw(_text)}, draw(_status)))
    return out


_turn = st.fixed_dictionaries(
    {
        "user": st.fixed_dictionaries(
            {
                "role": st.just("user"),
                "content": st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": _text}), max_size=3),
                "_meta": _meta,
            }
        ),
        "steps": st.lists(_step(), max_size=3),
        "end": st.sampled_from(["complete", "cancelled", "interrupted", "error", "waiting", "running"]),
        "error": st.none() | _text,
        "report": st.none() | st.dictionaries(_text, _json, max_size=3),
    }
)
_session = st.fixed_dictionaries(
    {
        "title": st.none() | _text,
        "mode": st.sampled_from(["read-only", "ask", "auto-edit", "full-auto"]),
        "metadata": st.dictionaries(_text, _json, max_size=3),
        "turns": st.lists(_turn, max_size=4),
        "rules": st.lists(st.tuples(_text, _text, st.sampled_from(["allow", "deny"])), max_size=2),
    }
)


async def _build(store: HistoryStore, spec: dict[str, Any]) -> str:
    sid = "sess_" + uuid.uuid4().hex
    await store.create_session(sid, "/w", spec["mode"], title=spec["title"], metadata=spec["metadata"])
    waiting: list[tuple[str, dict[str, Any]]] = []
    for turn in spec["turns"]:
        tid = "turn_" + uuid.uuid4().hex[:16]
        await store.begin_turn(sid, tid, MessageRecord("user", turn["user"]))
        for step in turn["steps"]:
            for body, status in step:
                await store.append_messages(sid, tid, [MessageRecord(body["role"], body, status)])
        if turn["end"] == "waiting":
            # set once every turn has begun: no turn begins while one waits for approval
            waiting.append((tid, turn))
        elif turn["end"] != "running":
            report = None if turn["report"] is None else {**turn["report"], **report_json(tid, session_id=sid)}
            await finish_with_raw_report(store, tid, turn["end"], report, error=turn["error"])
    for tid, turn in waiting:
        # the call the turn waits for is the model's (restore refuses one it never made)
        call = {"id": "c", "name": "n", "arguments": JSONRPC}
        await store.append_messages(sid, tid, [MessageRecord("assistant", {"role": "assistant", "tool_calls": [call]})])
        await set_raw_pending(store, tid, {"step": 1, "calls": [call], "report": turn["report"]})
    for kind, pattern, decision in spec["rules"]:
        await store.rules.add(kind, pattern, decision)
    return sid


def _normalised(snap: dict[str, Any]) -> dict[str, Any]:
    """The snapshot with the session's and turns' ids replaced by placeholders, minus the
    timestamps a new copy may change."""
    snap = copy.deepcopy(snap)
    sid = snap["session"].pop("id")
    del snap["exported_at"], snap["session"]["updated_at"]
    ids = {turn["id"]: f"T{i}" for i, turn in enumerate(snap["turns"])}
    for turn in snap["turns"]:
        turn["id"] = ids[turn["id"]]
    for entry in (*snap["messages"], *snap["reports"]):
        entry["turn_id"] = ids.get(entry["turn_id"], entry["turn_id"])
    for entry in snap["reports"]:
        report = entry["report"]
        if report.get("sessionId") == sid:
            report["sessionId"] = "S"
        report["turnId"] = ids.get(report.get("turnId"), report.get("turnId"))
    if snap["pending"] is not None:
        snap["pending"]["turn_id"] = ids[snap["pending"]["turn_id"]]
    return snap


async def _round_trip(spec: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        async with await HistoryStore.open(Path(folder) / "h.sqlite3") as store:
            sid = await _build(store, spec)
            first = await export_session(store, sid)
            # through JSON text, as a file or the wire carries it
            copy_id = await import_session(store, json.loads(json.dumps(first, ensure_ascii=False)))
            second = await export_session(store, copy_id)
        # under its own id (another workspace), a waiting turn still waits: all is kept
        async with await HistoryStore.open(Path(folder) / "other.sqlite3") as other:
            assert await import_session(other, first, keep_id=True, import_rules=True) == sid
            moved = await export_session(other, sid)
    assert _normalised(moved) == _normalised(first)
    assert [t["id"] for t in moved["turns"]] == [t["id"] for t in first["turns"]]
    assert copy_id != sid
    assert {t["id"] for t in first["turns"]}.isdisjoint(t["id"] for t in second["turns"])
    assert _normalised(second) == _normalised(_as_a_copy(first))


def _as_a_copy(snap: dict[str, Any]) -> dict[str, Any]:
    """What a copy under a new id keeps of a snapshot: everything, except that a turn still
    running or waiting for approval is interrupted (when its last message was written, or
    when it started), without its pending approvals."""
    snap = copy.deepcopy(snap)
    for turn in snap["turns"]:
        if turn["status"] == "running":
            times = [m["created_at"] for m in snap["messages"] if m["turn_id"] == turn["id"]]
            turn.update(status="interrupted", finished_at=max(times, default=turn["started_at"]))
            turn.pop("pending", None)
    snap["pending"] = None
    return snap


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=_session)
def test_export_import_export_is_identical_but_for_ids(spec: dict[str, Any]) -> None:
    asyncio.run(_round_trip(spec))


async def test_the_dump_text_of_odd_stored_values_is_still_their_encoding(store: HistoryStore, db_path: Path) -> None:
    """JSON has no NaN or infinity: a message holding them is stored with null, as
    JavaScript's JSON.stringify writes them. A row an earlier version stored with `NaN`
    in it (not JSON for SQLite) is written as valid JSON, with null, by the dump and by
    the snapshot a fork or `tether sessions show` reads (one writer); a body that is not
    JSON at all fails, naming why."""
    await _sample(store)
    # (in the waiting turn: no turn begins while one waits for approval)
    await store.append_messages(
        "s1",
        "t2",
        [
            MessageRecord(
                "user",
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "odd"}],
                    "x": float("nan"),
                    "y": float("inf"),
                },
            )
        ],
    )
    text = await export_session_json(store, "s1")
    assert '"x":null,"y":null' in text

    with closing(sqlite3.connect(db_path)) as conn, conn:
        conn.execute(
            'UPDATE messages SET body = replace(body, \'"x":null,"y":null\', \'"x":NaN,"y":Infinity\')'
            " WHERE session_id = 's1' AND seq = 6"
        )
    text = await export_session_json(store, "s1")
    strict = json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in the dump"))
    assert strict["messages"][-1]["body"]["x"] is None and strict["messages"][-1]["body"]["y"] is None
    snapshot = await export_session(store, "s1")
    assert snapshot["messages"][-1]["body"]["x"] is None and snapshot["messages"][-1]["body"]["y"] is None

    with closing(sqlite3.connect(db_path)) as conn, conn:
        conn.execute("UPDATE messages SET body = 'not json' WHERE session_id = 's1' AND seq = 6")
    with pytest.raises(ValueError):
        await export_session(store, "s1")


async def test_a_checked_snapshot_is_imported_as_it_is(store: HistoryStore) -> None:
    await _sample(store)
    raw = json.loads(json.dumps(await export_session(store, "s1")))
    del raw["messages"][0]["status"], raw["turns"][0]["stop_reason"]  # defaults to fill in
    checked = check_snapshot(raw)
    assert check_snapshot(checked) is checked
    assert "status" not in raw["messages"][0] and "stop_reason" not in raw["turns"][0]  # not changed
    assert checked["messages"][0]["status"] == "complete" and checked["turns"][0]["stop_reason"] is None
    copy_id = await import_session(store, checked)
    copied = await export_session(store, copy_id)
    assert [(m["seq"], m["status"], m["body"]) for m in copied["messages"]] == [
        (m["seq"], m["status"], m["body"]) for m in checked["messages"]
    ]


@pytest.mark.parametrize("checked", [False, True], ids=["streamed", "checked-first"])
async def test_the_first_wrong_field_is_named_in_the_format_s_order_not_the_record_s(
    store: HistoryStore, checked: bool
) -> None:
    """A record's keys may come in any order (a hand-edited file): msgspec stops at the
    first wrong one it reads, the message names the first in the format's order."""
    await _sample(store)
    snap = await export_session(store, "s1")
    message = snap["messages"][1]
    snap["messages"][1] = {
        "body": message["body"],
        "created_at": True,
        "status": "complete",
        "role": "robot",
        "turn_id": message["turn_id"],
        "seq": message["seq"],
    }
    turn = snap["turns"][0]
    snap["turns"][0] = {"started_at": "soon", **{k: v for k, v in turn.items() if k != "started_at"}}
    snap["turns"][0]["status"] = "done"
    with pytest.raises(SnapshotError, match=r"^turns\[0\]\.status must be one of \["):
        await (asyncio.to_thread(check_snapshot, snap) if checked else import_session(store, snap))
    snap["turns"][0] = turn
    with pytest.raises(SnapshotError, match=r"^messages\[1\]\.role must be one of \['assistant', 'system'"):
        await (asyncio.to_thread(check_snapshot, snap) if checked else import_session(store, snap))
    # a missing optional field is filled in (the checked record says so), not refused
    del snap["messages"][1]["status"]
    snap["messages"][1].update(role=message["role"], created_at=1.0)
    assert check_snapshot(snap)["messages"][1]["status"] == "complete"
    assert len((await store.list_sessions())[0]) == 1
