"""The snapshot's Structs are the one description of what a restore accepts: the checkpoint of
calls waiting for approval (``PendingApprovals``/``PendingCall``) and the stored roles and
statuses (``_stored_vocabulary``) are read by the Structs the schema is written from, and the
store's records use the same words; the top level's lists and their order are ``Snapshot``'s, and a run report is a ``RunReport``. Each test walks the Struct, so a change to it changes
what is asserted."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, get_args, get_origin

import msgspec
import pytest

from tether.store import HistoryStore, MessageRecord
from tether.store.snapshot_checks import SnapshotError
from tether.store.snapshot_reader import SnapshotReader
from tether.store.snapshots import check_snapshot, export_session, import_session, import_stream, open_snapshot
from tether_protocol import (
    PendingApprovals,
    PendingCall,
    RunReport,
    Snapshot,
    SnapshotMessage,
    SnapshotTurn,
    Usage,
    unstructure,
)

CALL = {"id": "c1", "name": "write_file", "arguments": {"path": "a.txt"}, "started": True}
SNAPSHOT: dict[str, Any] = {
    "tether_snapshot": 1,
    "session": {"id": "s1", "workspace": "/w", "title": None, "mode": "ask", "created_at": 1.0,
                "updated_at": 2.0, "metadata": {}},
    "turns": [{"id": "t1", "seq": 1, "status": "running", "stop_reason": None, "started_at": 1.0,
               "finished_at": None, "error": None, "pending": {"step": 2, "calls": [CALL]}}],
    "messages": [{"seq": 0, "turn_id": "t1", "role": "user", "status": "complete", "created_at": 1.0,
                  "body": {"role": "user", "content": [{"type": "text", "text": "hi"}]}}],
    "reports": [],
    "pending": None,
}
# a value of another kind than each field's type, as stored JSON
_WRONG = {str: 7, bool: "yes", int: "one", dict: ["a list"]}


def _with_call(call: dict[str, Any]) -> dict[str, Any]:
    snapshot = copy.deepcopy(SNAPSHOT)
    snapshot["turns"][0]["pending"]["calls"] = [call]
    return snapshot


def test_restore_reads_the_checkpoint_as_its_struct_does() -> None:
    pending = check_snapshot(copy.deepcopy(SNAPSHOT))["turns"][0]["pending"]
    assert PendingApprovals.from_json(pending) == msgspec.convert(SNAPSHOT["turns"][0]["pending"], PendingApprovals)


@pytest.mark.parametrize("field", msgspec.structs.fields(PendingCall), ids=lambda f: f.name)
def test_each_checkpoint_field_is_required_or_defaulted_as_the_struct_declares(field: Any) -> None:
    left_out = {k: v for k, v in CALL.items() if k != field.name}
    if field.required:
        with pytest.raises(SnapshotError) as caught:
            check_snapshot(_with_call(left_out))
        assert str(caught.value) == f"turns[0].pending.calls[0].{field.name} is missing"
    else:
        read = PendingApprovals.from_json(check_snapshot(_with_call(left_out))["turns"][0]["pending"])
        default = field.default_factory() if field.default is msgspec.NODEFAULT else field.default
        assert getattr(read.calls[0], field.name) == default


@pytest.mark.parametrize("field", msgspec.structs.fields(PendingCall), ids=lambda f: f.name)
def test_a_checkpoint_field_of_another_type_than_the_struct_declares_is_refused_naming_it(field: Any) -> None:
    kind = getattr(field.type, "__origin__", field.type)
    with pytest.raises(SnapshotError) as caught:
        check_snapshot(_with_call({**CALL, field.name: _WRONG[kind]}))
    assert str(caught.value).startswith(f"turns[0].pending.calls[0].{field.name} must be ")


def test_the_step_is_bounded_as_the_struct_declares() -> None:
    bound = next(a for a in get_args(msgspec.structs.fields(PendingApprovals)[0].type) if isinstance(a, msgspec.Meta))
    assert isinstance(bound.ge, int) and isinstance(bound.le, int)
    for step, accepted in ((bound.ge, True), (bound.ge - 1, False), (bound.le, True), (bound.le + 1, False)):
        snapshot = copy.deepcopy(SNAPSHOT)
        snapshot["turns"][0]["pending"]["step"] = step
        if accepted:
            check_snapshot(snapshot)
            continue
        with pytest.raises(SnapshotError) as caught:
            check_snapshot(snapshot)
        assert str(caught.value) == f"turns[0].pending.step must be an integer from 1, not {step}"


def _choices(cls: type[msgspec.Struct], name: str) -> tuple[str, ...]:
    return get_args(next(f.type for f in msgspec.structs.fields(cls) if f.name == name))


def test_every_turn_status_and_message_role_and_status_a_restore_accepts_the_store_records() -> None:
    for status in _choices(SnapshotTurn, "status"):
        snapshot = copy.deepcopy(SNAPSHOT)
        snapshot["turns"][0]["status"] = status
        check_snapshot(snapshot)
    for role in _choices(SnapshotMessage, "role"):
        for status in _choices(SnapshotMessage, "status"):
            MessageRecord(role, {}, status=status).check()  # (refuses a word it does not know)
    with pytest.raises(ValueError, match="message status must be one of"):
        MessageRecord("user", {}, status="paused").check()
    snapshot = copy.deepcopy(SNAPSHOT)
    snapshot["messages"][0]["status"] = "paused"
    with pytest.raises(SnapshotError, match=r"messages\[0\]\.status must be one of"):
        check_snapshot(snapshot)


# ---- the snapshot's top level: the `Snapshot` Struct's lists, their order -----------------

_LISTS = [f for f in msgspec.structs.fields(Snapshot) if get_origin(f.type) is list]


async def _restore_file(tmp_path: Path, snapshot: dict[str, Any]) -> list[str]:
    """``snapshot`` restored from a file a record at a time; the restored messages' roles."""
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(snapshot))
    async with await HistoryStore.open(tmp_path / "h.sqlite3") as store:
        with path.open("rb") as stream:
            session_id, _ = await import_stream(store, open_snapshot(SnapshotReader(stream, str(path))))
        return [m.role for m in await store.load_messages(session_id)]


def test_the_snapshot_has_the_lists_its_struct_declares() -> None:
    assert [f.name for f in _LISTS] == ["turns", "messages", "reports", "rules"]  # (as SPEC §3.28 shows)


@pytest.mark.parametrize("field", _LISTS, ids=lambda f: f.name)
async def test_a_list_the_struct_requires_is_refused_when_missing_one_it_defaults_is_empty(
    field: Any, tmp_path: Path
) -> None:
    without = {k: v for k, v in copy.deepcopy(SNAPSHOT).items() if k != field.name}
    if field.required:
        missing = f'^"{field.name}" must be a list, not missing$'
        with pytest.raises(SnapshotError, match=missing):
            check_snapshot(copy.deepcopy(without))
        with pytest.raises(SnapshotError, match=missing):
            await _restore_file(tmp_path, without)
    else:
        assert check_snapshot(copy.deepcopy(without))[field.name] == []
        assert await _restore_file(tmp_path, without) == ["user"]


@pytest.mark.parametrize("field", [f for f in _LISTS if f.required][1:], ids=lambda f: f.name)
async def test_a_streamed_restore_needs_the_turns_before_the_lists_that_name_them(field: Any, tmp_path: Path) -> None:
    first, required = _LISTS[0].name, [f.name for f in _LISTS if f.required]
    moved = {k: v for k, v in SNAPSHOT.items() if k not in required}  # `field` first of the lists
    moved |= {name: SNAPSHOT[name] for name in [field.name, *required] if name not in moved}
    with pytest.raises(SnapshotError) as caught:
        await _restore_file(tmp_path, moved)
    assert str(caught.value) == f'"{first}" must come before "{field.name}" in the snapshot (as dump writes it)'


# ---- a snapshot's run report is a `RunReport`, as the dump writes it ---------------------


def _with_report(report: dict[str, Any]) -> dict[str, Any]:
    snapshot = copy.deepcopy(SNAPSHOT)
    snapshot["turns"][0] |= {"status": "complete", "finished_at": 2.0, "pending": None}
    snapshot["reports"] = [{"turn_id": "t1", "report": report}]
    return snapshot


def _report() -> dict[str, Any]:
    report = RunReport("t1", "s1", "scripted", "m", 1.0, 2.0, 1000.0, "end_turn", "complete", [], 0, 0, Usage(1, 2), 0.5, 0.0)
    encoded: dict[str, Any] = unstructure(report)
    return encoded


@pytest.mark.parametrize("field", [f for f in msgspec.structs.fields(RunReport) if f.required], ids=lambda f: f.name)
def test_a_report_without_a_field_its_struct_requires_is_refused_naming_it(field: Any) -> None:
    report = {k: v for k, v in _report().items() if k != field.encode_name}
    with pytest.raises(SnapshotError) as caught:
        check_snapshot(_with_report(report))
    assert str(caught.value) == f"reports[0].report.{field.encode_name}: required field missing"


async def test_a_report_keeps_the_keys_its_struct_does_not_know(tmp_path: Path) -> None:
    report = {**_report(), "later": {"kept": [1, 2]}}
    with pytest.raises(SnapshotError, match=r"^reports\[0\]\.report\.stepCount: expected an integer, got a string$"):
        check_snapshot(_with_report({**report, "stepCount": "2"}))
    async with await HistoryStore.open(tmp_path / "h.sqlite3") as store:
        session_id = await import_session(store, _with_report(report), keep_id=True)
        assert (await export_session(store, session_id))["reports"] == [{"turn_id": "t1", "report": report}]
