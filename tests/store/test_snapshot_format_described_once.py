"""A snapshot's records have one description: `tether_protocol._snapshots`' record classes. The
restore checks a record with them and `protocol/schema.json` is written from them, so the two
agree on every record of a real dump (`tests/e2e/fixtures/dump_by_main.json`) with one field left
out or given a value of another kind or out of its bounds.

What neither says alone is left out: the checks across records (seq order, unique ids, a turn
that exists, a rewind the checkpoints hold) and the raw JSON each checked by its own reader and
only described in the schema (a message's `body`, a turn's `pending`, a `report`, `rewound`).
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import pytest
from jsonschema import Draft202012Validator

from tether.store import SnapshotError
from tether.store.snapshots import check_snapshot
from tether_protocol import Described, _snapshots, build_schema

if TYPE_CHECKING:
    from collections.abc import Iterator

DUMP = json.loads((Path(__file__).resolve().parents[1] / "e2e" / "fixtures" / "dump_by_main.json").read_text())
RECORDS = {
    "session": _snapshots.SnapshotSession,
    "turns": _snapshots.SnapshotTurn,
    "messages": _snapshots.SnapshotMessage,
    "reports": _snapshots.SnapshotReport,
    "rules": _snapshots.SnapshotRule,
}
ACROSS = ("appears twice", "greater than", "is not one of the turns", "two reports", "rewind")
# (a time past its bound is not whole: JSON Schema takes 1e12 as an integer, msgspec as a float)
WRONG = (None, True, 7, -1, 1.5, 2e11 + 0.5, 2**60, "", "x", [], {})


@functools.cache
def _validator() -> Draft202012Validator:
    schema = build_schema()
    return Draft202012Validator({"$defs": schema["$defs"], "$ref": "#/$defs/Snapshot"})


def _own_fields(cls: type[msgspec.Struct]) -> list[str]:
    """The fields its Struct checks itself (not raw JSON `Described` for another reader)."""
    return [
        f.name
        for f in msgspec.structs.fields(cls)
        if not any(isinstance(a, Described) for a in getattr(f.type, "__metadata__", ()))
    ]


def _changes() -> Iterator[tuple[str, str, Any]]:
    """(record, field, value) for each change: a field left out (`UNSET`) or of a wrong value."""
    for key, cls in RECORDS.items():
        for field in _own_fields(cls):
            for value in (msgspec.UNSET, *WRONG):
                yield key, field, value


def _changed(key: str, field: str, value: Any) -> dict[str, Any]:
    """The dump (with a rule) with one change to its first record of `key` (built in the test:
    collecting copies of the dump for every case cost each worker seconds)."""
    snapshot = copy.deepcopy(
        {**DUMP, "rules": DUMP["rules"] or [{"kind": "execute", "pattern": "npm test", "decision": "allow"}]}
    )
    record = snapshot[key] if key == "session" else snapshot[key][0]
    changed = {k: v for k, v in record.items() if k != field}
    if value is not msgspec.UNSET:
        changed[field] = value
    if key == "session":
        snapshot[key] = changed
    else:
        snapshot[key][0] = changed
    return snapshot


def _restore_verdict(snapshot: dict[str, Any]) -> bool | None:
    """True: the restore's checks take it; False: refused; None: refused across records."""
    try:
        check_snapshot(snapshot)
    except SnapshotError as exc:
        return None if any(words in str(exc) for words in ACROSS) else False
    return True


CHANGES = list(_changes())


def test_the_dump_itself_is_valid_both_ways() -> None:
    assert _restore_verdict(copy.deepcopy(DUMP)) is True
    assert _validator().is_valid(DUMP)


@pytest.mark.parametrize(("key", "field", "value"), CHANGES, ids=[f"{k}.{f}={v!r}" for k, f, v in CHANGES])
def test_the_schema_and_the_restore_agree(key: str, field: str, value: Any) -> None:
    snapshot = _changed(key, field, value)
    verdict = _restore_verdict(copy.deepcopy(snapshot))
    if verdict is not None:
        assert _validator().is_valid(snapshot) is verdict


def test_both_verdicts_are_reached() -> None:
    verdicts = [_restore_verdict(_changed(*change)) for change in CHANGES]
    assert verdicts.count(True) > 20 and verdicts.count(False) > 100
