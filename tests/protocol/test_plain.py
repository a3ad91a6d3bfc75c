"""The fast lane (`_plain`) gives what the converter gives, or steps aside.

For every params and result class of the method table (and the classes inside them),
wire data of every field kind — complete, minimal, with a wrong type, null or a missing
field in each place, with unknown keys — is structured both ways: where the fast lane
answers, the converter builds an equal instance (so its errors are never skipped); and
instances are unstructured both ways to the same JSON, key order included. The start
path's own messages (`session/new`) must take the fast lane.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator
from typing import Any

import attrs
import orjson
import pytest
from schema_samples import MODES, VALID

from tether_protocol._converter import structure, unstructure
from tether_protocol._errors import InvalidParams
from tether_protocol._fields import spelled
from tether_protocol._methods import V1
from tether_protocol._plain import structure_plain, unstructure_plain
from tether_protocol._sessions import NewSessionParams, NewSessionResult


def _classes() -> list[type]:
    found: dict[type, None] = {}

    def walk(tp: Any) -> None:
        if isinstance(tp, type) and attrs.has(tp):
            if tp in found:
                return
            found[tp] = None
            attrs.resolve_types(tp)
            for field in attrs.fields(tp):
                walk(field.type)
        for arg in typing.get_args(tp):
            walk(arg)

    for method in V1:
        walk(method.params)
        walk(method.result)
    return list(found)


CLASSES = _classes()


def _samples(tp: Any, depth: int = 0) -> list[Any]:
    """Wire values of type ``tp`` (the first one complete)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if isinstance(tp, type) and attrs.has(tp):
        return [_wire(tp, full=True, depth=depth), _wire(tp, full=False, depth=depth)] if depth < 4 else []
    if origin is typing.Literal:
        return list(args)
    if origin is typing.Union:
        return [s for a in args for s in _samples(a, depth)]
    if origin is list:
        items = _samples(args[0], depth + 1) if args else [1]
        return [items[:2], []]
    basics: dict[Any, list[Any]] = {
        str: ["x", ""], int: [7, 0], bool: [True, False], float: [1.5, 2], type(None): [None],
        dict[str, Any]: [{"k": [1, {"a": None}]}, {}],
    }
    return basics.get(tp, [{"any": [1, "two"]}, "text", None])


def _wire(cls: type, *, full: bool, depth: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field in attrs.fields(cls):
        samples = _samples(field.type, depth + 1)
        required = field.default is attrs.NOTHING
        if samples and (full or required):
            out[spelled(cls, field)] = samples[0]
    return out


def _variants(cls: type) -> Iterator[dict[str, Any]]:
    for full in (True, False):
        base = _wire(cls, full=full)
        yield base
        yield {**base, "unknownKey": 1}
        for field in attrs.fields(cls):
            key = spelled(cls, field)
            yield {k: v for k, v in base.items() if k != key}
            for other in (None, 1, "1", True, 1.5, [], {}, [{"a": 1}], ["a"]):
                yield {**base, key: other}
            for sample in _samples(field.type):
                yield {**base, key: sample}


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value)  # key order counts (no OPT_SORT_KEYS)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_the_fast_lane_builds_what_the_converter_builds_or_steps_aside(cls: type) -> None:
    for data in _variants(cls):
        plain = structure_plain(data, cls)
        if plain is None:
            continue
        try:
            converted = structure(data, cls)
        except InvalidParams as exc:
            pytest.fail(f"the fast lane took {data!r}, which the converter refuses: {exc}")
        assert plain == converted, data
        assert type(plain) is type(converted)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_the_fast_lane_writes_what_the_converter_writes(cls: type) -> None:
    for data in _variants(cls):
        try:
            obj = structure(data, cls)
        except InvalidParams:
            continue
        plain = unstructure_plain(obj)
        if plain is not None:
            assert _dumps(plain) == _dumps(unstructure(obj)), data


def test_realistic_messages_go_the_same_both_ways() -> None:
    import tether_protocol

    for _id, name, message in VALID:
        cls = getattr(tether_protocol, name, None)
        if not (isinstance(cls, type) and attrs.has(cls)):
            continue
        obj = structure(message, cls)
        plain = structure_plain(message, cls)
        assert plain is None or plain == obj, _id
        wire = unstructure_plain(obj)
        assert wire is None or _dumps(wire) == _dumps(unstructure(obj)), _id


def test_session_new_takes_the_fast_lane_both_ways() -> None:
    params = structure_plain({"cwd": "/w", "mcpServers": []}, NewSessionParams)
    assert params == NewSessionParams("/w", [])
    result = structure(
        {"sessionId": "sess_1", "modes": MODES, "configOptions": [
            {"id": "model", "name": "Model", "currentValue": "m", "options": [{"value": "m", "name": "m"}],
             "type": "select", "category": "model"}]},
        NewSessionResult,
    )
    assert unstructure_plain(result) == unstructure(result)
    # a value the converter must word an error for is left to it
    assert structure_plain({"cwd": 3}, NewSessionParams) is None
    assert structure_plain({"mcpServers": []}, NewSessionParams) is None


@attrs.define
class _Checked:
    name: str = attrs.field(validator=attrs.validators.min_len(1))


def test_a_class_that_runs_its_own_checks_is_left_to_the_converter() -> None:
    # its validator could fail while it is built: the converter words that error
    assert structure_plain({"name": ""}, _Checked) is None
    assert structure_plain({"name": "x"}, _Checked) is None
