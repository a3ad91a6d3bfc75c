"""The msgspec-generated `protocol/schema.json` describes the messages the hand-built one did.

`fixtures/schema_hand_built.json` is the schema as `_schema.py`'s hand builder wrote it (main,
before issue 32 item 1 moved it to `msgspec.json.schema_components`). Every realistic and invalid
sample, every class's sample and each sample with one required key dropped or one value of the
wrong kind gets the same verdict from both, under every `$defs` entry and every method's params
and result. (The recorded daemon sessions are `test_wire_matches_schema.py`'s.)
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import pytest
from jsonschema import Draft202012Validator
from schema_samples import INVALID, VALID
from test_schema import _message_classes, _sample

from tether_protocol import build_schema, unstructure

if TYPE_CHECKING:
    from collections.abc import Iterator

OLD = json.loads((Path(__file__).resolve().parent / "fixtures" / "schema_hand_built.json").read_text())


@functools.cache
def _new() -> dict[str, Any]:
    return build_schema()


def _samples() -> Iterator[tuple[str, Any]]:
    """($defs name, message) pairs: the realistic ones, each class's, and their near misses (a
    message met twice is checked once: the same message gets the same verdict)."""
    for _, name, message in [*VALID, *INVALID]:
        yield name, message
    for name, cls in _message_classes().items():
        for nulls in (False, True):
            yield name, unstructure(_sample(cls, nulls=nulls))
    for _, name, message in VALID:
        for key in message:
            yield name, {k: v for k, v in message.items() if k != key}
            for wrong in (None, 7, "x", [], {}):
                yield name, {**message, key: wrong}


def _verdict(schema: dict[str, Any], node: dict[str, Any], message: Any) -> bool:
    return Draft202012Validator({"$defs": schema["$defs"], **node}).is_valid(message)


def _changed(old_node: dict[str, Any], new_node: dict[str, Any]) -> list[Any]:
    """The samples the old and the new schema judge differently under these nodes (one validator
    each for all the samples: building one per message cost as much as the checks)."""
    old = Draft202012Validator({"$defs": OLD["$defs"], **old_node})
    new = Draft202012Validator({"$defs": _new()["$defs"], **new_node})
    return [message for message in MESSAGES if old.is_valid(message) != new.is_valid(message)]


SAMPLES = list({json.dumps(pair, sort_keys=True): pair for pair in _samples()}.values())
MESSAGES = list({json.dumps(message, sort_keys=True): message for _, message in SAMPLES}.values())


def test_the_samples_reach_both_verdicts() -> None:
    verdicts = {_verdict(OLD, {"$ref": f"#/$defs/{name}"}, message) for name, message in SAMPLES}
    assert verdicts == {True, False}
    assert len(SAMPLES) > 1000


# The snapshot's records are described by the classes a restore checks them with (one description
# since item 1): a key a restore fills in when it is left out is optional (a dump writes them all).
FILLED_IN = {
    "SnapshotSession": {"title"},
    "SnapshotTurn": {"stop_reason", "finished_at", "error"},
    "SnapshotMessage": {"turn_id", "status"},
    "PendingApprovals": {"step"},
    "PendingCall": {"arguments"},
}
# The checkpoint's classes are its reader since issue 32 (twins32): the schema no longer allows
# what the reader refused (a null `started`, a step below 1).
READ_BY_STRUCT = {"PendingApprovals", "PendingCall"}


def test_a_record_without_a_key_a_restore_fills_in_is_now_valid() -> None:
    for name, keys in FILLED_IN.items():
        node = {"$ref": f"#/$defs/{name}"}
        whole = next(m for n, m in SAMPLES if n == name and _verdict(OLD, node, m))
        for key in keys:
            cut = {k: v for k, v in whole.items() if k != key}
            assert (_verdict(OLD, node, cut), _verdict(_new(), node, cut)) == (False, True), (name, key)


def _reads(cls: Any, message: Any) -> bool:
    try:
        msgspec.convert(message, cls)
    except msgspec.ValidationError:
        return False
    return True


@pytest.mark.parametrize("name", sorted(OLD["$defs"]))
def test_every_definition_gives_the_old_verdicts(name: str) -> None:
    """Two changes: a tagged class (a union member) now needs its tag on its own too, as msgspec
    describes it (the tag was required in its union already, and Tether always writes it); and
    `FILLED_IN`; and `READ_BY_STRUCT`: a message only the old schema allowed is one its reader refuses."""
    node = {"$ref": f"#/$defs/{name}"}
    assert name in _new()["$defs"]
    cls = _message_classes().get(name)
    tag = cls.__struct_config__.tag_field if cls is not None else None  # type: ignore[attr-defined]
    changed = _changed(node, node)
    filled = FILLED_IN.get(name, set())
    assert [
        m
        for m in changed
        if not (tag and isinstance(m, dict) and tag not in m)
        and not (isinstance(m, dict) and filled - set(m) and _verdict(_new(), node, m))
        and not (name in READ_BY_STRUCT and not _reads(cls, m))
    ] == []
    if tag:
        assert not _verdict(_new(), node, {}), f"{name} without its tag {tag!r} is refused"


@pytest.mark.parametrize("method", sorted(OLD["x-tether-methods"]))
def test_every_method_gives_the_old_verdicts(method: str) -> None:
    old, new = OLD["x-tether-methods"][method], _new()["x-tether-methods"][method]
    assert {k: v for k, v in old.items() if k not in ("params", "result")} == {
        k: v for k, v in new.items() if k not in ("params", "result")
    }
    for part in ("params", "result"):
        if old[part] is None:
            assert new[part] is None
            continue
        assert _changed(old[part], new[part]) == [], part
