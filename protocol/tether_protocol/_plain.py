"""Plain messages moved without the converter: the start path's fast lane.

Owns: `structure_plain(data, cls)` — the instance of `cls` the converter would build from
`data`, or None when the converter has to decide (a field that is not plain, a value of
another type, a missing required field, a field with checks: the converter also words
the error) — and `unstructure_plain(obj)`, the wire dict the converter would give for an
instance of a plain class, or None. Plain fields: `str`, `int`, `bool`, `float`, string
`Literal`s, `X | None` of those; on the way in also raw JSON objects (`JsonObject`,
`Meta`) and lists of them, taken as they are, as the converter does; on the way out also
attrs classes and lists of them whose own fields are plain, and msgspec Structs (their
built-ins). Names and omissions are the converter's (`_fields.spelled`; a field whose
default is None is left out while it is None).
Must not: import cattrs (that is the point: the converter's import and its generated
functions cost `session/new` ~7 ms at start), or give a result the converter would not
give (tests/protocol/test_plain.py compares the two for every class of the method table).
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any, TypeVar

import attrs

from ._fields import ERROR, MAXIMUM, MINIMUM, NON_EMPTY, spelled
from ._json import JsonObject

T = TypeVar("T")
Check = Callable[[Any], bool]  # whether a wire value is taken as it is
Out = Callable[[Any], Any]  # a field's value on the wire
_SCALARS: dict[Any, Check] = {
    str: lambda v: type(v) is str,
    int: lambda v: type(v) is int,
    bool: lambda v: type(v) is bool,
    float: lambda v: type(v) is float or type(v) is int,  # the converter's: 3 is a number
    type(None): lambda v: v is None,
    JsonObject: lambda v: type(v) is dict,  # a field declared as a raw JSON object
}


def _scalar_check(tp: Any) -> Check | None:
    check = _SCALARS.get(tp)
    if check is not None:
        return check
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal and all(type(a) is str for a in args):
        return lambda v: type(v) is str and v in args
    if origin is typing.Union and len(args) == 2 and type(None) in args:
        (inner,) = [a for a in args if a is not type(None)]
        found = _scalar_check(inner)
        if found is not None:
            return lambda v: v is None or found(v)
    return None


def _in_check(tp: Any) -> Check | None:
    if typing.get_origin(tp) is list and typing.get_args(tp) == (JsonObject,):
        return lambda v: type(v) is list and all(type(item) is dict for item in v)
    return _scalar_check(tp)


def _resolved(cls: type) -> bool:
    """Whether the field types of ``cls`` could be resolved (the converter resolves them too)."""
    try:
        attrs.resolve_types(cls)
    except (NameError, TypeError):
        return False
    return True


def _has_checks(field: attrs.Attribute[Any]) -> bool:
    return any(key in field.metadata for key in (ERROR, MINIMUM, MAXIMUM, NON_EMPTY))


# ---- wire -> class -------------------------------------------------------------------

_InPlan = list[tuple[str, str, Check, bool]]  # (argument, wire key, check, required)
_in_plans: dict[type, _InPlan | None] = {}


def _in_plan(cls: type) -> _InPlan | None:
    if cls not in _in_plans:
        _in_plans[cls] = None
        # a class that runs code of its own while it is built (a validator, a converter, a
        # post-init hook) may fail there: the converter words that error, so it builds it
        if not _resolved(cls) or hasattr(cls, "__attrs_post_init__"):
            return None
        plan: _InPlan = []
        for field in attrs.fields(cls):
            own_code = field.validator is not None or field.converter is not None
            check = None if _has_checks(field) or not field.init or own_code else _in_check(field.type)
            if check is None:
                return None
            plan.append((field.alias, spelled(cls, field), check, field.default is attrs.NOTHING))
        _in_plans[cls] = plan
    return _in_plans[cls]


def structure_plain(data: Any, cls: type[T]) -> T | None:
    """`cls` built from ``data`` (a dict, or None for `{}`) if every field is plain and
    every value has its field's type; None: ask the converter."""
    if data is None:
        data = {}
    plan = _in_plan(cls) if attrs.has(cls) else None
    if plan is None or type(data) is not dict:
        return None
    kwargs: dict[str, object] = {}
    for name, key, check, required in plan:
        if key not in data:
            if required:
                return None
            continue
        value = data[key]
        if not check(value):
            return None
        kwargs[name] = list(value) if type(value) is list else value  # the converter's copy
    return cls(**kwargs)


# ---- class -> wire -------------------------------------------------------------------

_OutPlan = list[tuple[str, str, Out | None, bool]]  # (attribute, key, convert, omit None)
_out_plans: dict[type, _OutPlan | None] = {}


class _NotPlain(Exception):
    """A field type the converter has to unstructure."""


def _out(tp: Any) -> Out | None:
    """How a value of ``tp`` goes on the wire (None: as it is)."""
    if JsonObject in (tp, *typing.get_args(tp)):
        raise _NotPlain(tp)  # raw JSON a handler built may hold typed values the converter unstructures
    if _scalar_check(tp) is not None:
        return None
    if isinstance(tp, type) and hasattr(tp, "__struct_config__"):  # the msgspec model: its own
        import msgspec  # (loaded with the class)

        return msgspec.to_builtins
    if isinstance(tp, type) and attrs.has(tp):
        if _out_plan(tp) is None:
            raise _NotPlain(tp)
        return lambda v: _unstructure(v, tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Union and len(args) == 2 and type(None) in args:
        (inner,) = [a for a in args if a is not type(None)]
        convert = _out(inner)
        return None if convert is None else (lambda v: None if v is None else convert(v))
    if origin is list and len(args) == 1:
        item = _out(args[0])
        return None if item is None else (lambda v: [item(x) for x in v])
    raise _NotPlain(tp)


def _out_plan(cls: type) -> _OutPlan | None:
    if cls not in _out_plans:
        _out_plans[cls] = None  # while it is planned (a class that holds itself is not plain)
        if not _resolved(cls):
            return None
        try:
            plan = [(f.name, spelled(cls, f), _out(f.type), f.default is None) for f in attrs.fields(cls)]
        except _NotPlain:
            return None
        # the converter's key order: the fields always written, then those left out while None
        _out_plans[cls] = sorted(plan, key=lambda step: step[3])
    return _out_plans[cls]


def _unstructure(obj: Any, cls: type) -> JsonObject:
    plan = _out_plans[cls]
    assert plan is not None
    out: JsonObject = {}
    for name, key, convert, omit_none in plan:
        value = getattr(obj, name)
        if value is None and omit_none:
            continue
        out[key] = value if convert is None else convert(value)
    return out


def unstructure_plain(obj: Any) -> JsonObject | None:
    """``obj`` (an attrs instance) on the wire, if its class is plain; None: ask the converter."""
    cls = type(obj)
    if not attrs.has(cls) or _out_plan(cls) is None:
        return None
    return _unstructure(obj, cls)
