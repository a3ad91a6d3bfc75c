"""Tool arguments declared as attrs classes: the JSON Schema the model is shown and the
check of what it sends back are both derived from the class.

Owns: `arg()` (an attrs field carrying its description and bounds), `ArgSpec`,
`schema_of()` (the JSON Schema of an args class, with a tool's per-instance overrides),
`parse_args()` (one cattrs converter turning the model's JSON into the typed args object,
with messages that name the argument and what was expected, e.g.
`read_file: 'limit' must be an integer >= 1, got "ten"`), and `dump_args()` (the typed
args back to JSON, defaults filled in, as approvals and the client are shown them).
Must not: know about specific tools, touch the filesystem, or depend on the agent loop.

Supported field types: `str`, `int`, `bool`, `Literal[...]` of strings, `tuple[X, ...]`
(a JSON array), nested attrs classes (a JSON object), and `X | None = None` for an
optional argument without a default. Every object is closed (`additionalProperties`
false). A null for an optional key counts as absent, because models often send
`"offset": null` to mean "not given".
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

import attr
import attrs
import cattrs
from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
)
from cattrs.gen import make_dict_structure_fn

__all__ = ["KEEP", "ArgError", "ArgSpec", "arg", "dump_args", "parse_args", "required_names", "schema_of", "show"]

T = TypeVar("T")
_META = "tether.arg"
ArgPath = tuple["str | int", ...]  # where in the arguments: ("edits", 1, "old_text")


KEEP: Any = type("Keep", (), {"__repr__": lambda _: "KEEP"})()  # an override keeps the class default


@attrs.frozen
class ArgSpec:
    """What the class annotation cannot say: the model-facing description and bounds.

    In a tool's `arg_overrides`, a spec replaces the field's own (for bounds that come
    from configuration); its `default`, when set, replaces the class default too.
    """

    description: str | None = None
    minimum: int | None = None
    maximum: int | None = None
    min_items: int | None = None
    default: Any = KEEP  # JSON edge: a default value as the schema shows it
    # What the model is told for a value over `maximum`, instead of the bounds in words
    # ({value} and {maximum} are filled in); not part of the schema.
    above: str | None = None


class ArgError(Exception):
    """The arguments do not fit the class; the message names the argument (no tool name)."""


def arg(
    description: str | None = None,
    *,
    default: Any = attrs.NOTHING,
    minimum: int | None = None,
    maximum: int | None = None,
    min_items: int | None = None,
    above: str | None = None,
) -> Any:
    """An attrs field of an args class: `path: str = arg("File path ...")`."""
    spec = ArgSpec(description, minimum, maximum, min_items, above=above)
    return attrs.field(default=default, metadata={_META: spec})


# ---- the schema ---------------------------------------------------------------------


def _spec(field: attrs.Attribute[Any], overrides: Mapping[str, ArgSpec]) -> ArgSpec:
    found = overrides.get(field.name) or field.metadata.get(_META)
    return found if isinstance(found, ArgSpec) else ArgSpec()


def _default(field: attrs.Attribute[Any], spec: ArgSpec) -> Any:
    return field.default if spec.default is KEEP else spec.default


def _optional(tp: Any) -> Any:
    """`X | None` -> X (an optional argument); anything else unchanged."""
    if get_origin(tp) in (Union, types.UnionType):
        rest = [a for a in get_args(tp) if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return tp


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _type_schema(tp: Any) -> dict[str, Any]:
    tp = _optional(tp)
    if tp is str:
        return {"type": "string"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if get_origin(tp) is Literal:
        return {"type": "string", "enum": list(get_args(tp))}
    if get_origin(tp) in (tuple, list):
        return {"type": "array", "items": _type_schema(get_args(tp)[0])}
    if attrs.has(tp):
        return schema_of(tp)
    raise TypeError(f"no JSON Schema for argument type {tp!r}")


def _property(cls: type, field: attrs.Attribute[Any], spec: ArgSpec) -> dict[str, Any]:
    prop = _type_schema(_hints(cls)[field.name])
    bounds = {"minimum": spec.minimum, "maximum": spec.maximum, "minItems": spec.min_items}
    prop.update({key: value for key, value in bounds.items() if value is not None})
    default = _default(field, spec)
    if default is not attrs.NOTHING and default is not None:
        prop["default"] = default
    if spec.description is not None:
        prop["description"] = spec.description
    return prop


def schema_of(cls: type, overrides: Mapping[str, ArgSpec] | None = None) -> dict[str, Any]:
    """The JSON Schema (a closed object) the model is given for the args class `cls`."""
    overrides = overrides or {}
    fields = attrs.fields(cls)
    return {
        "type": "object",
        "properties": {f.name: _property(cls, f, _spec(f, overrides)) for f in fields},
        "required": [f.name for f in fields if f.default is attrs.NOTHING],
        "additionalProperties": False,
    }


# ---- what is expected, in words -------------------------------------------------------


def _words(tp: Any, spec: ArgSpec) -> str:
    tp = _optional(tp)
    if get_origin(tp) is Literal:
        return "one of " + ", ".join(show(option) for option in get_args(tp))
    if get_origin(tp) in (tuple, list):
        item = _optional(get_args(tp)[0])
        text = "an array"
        if item in (str, int, bool) or attrs.has(item):
            text += " of " + {str: "strings", int: "integers", bool: "booleans"}.get(item, "objects")
        least = spec.min_items
        return text + (f" with at least {least} item{'' if least == 1 else 's'}" if least else "")
    text = {str: "a string", int: "an integer", bool: "a boolean"}.get(tp, "an object")
    low, high = spec.minimum, spec.maximum
    if low is not None and high is not None:
        return f"{text} between {low} and {high}"
    if low is not None:
        return f"{text} >= {low}"
    return text if high is None else f"{text} <= {high}"


def show(value: Any) -> str:
    """A value as the model wrote it (JSON)."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _name(path: ArgPath) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


@attrs.frozen
class _Where:
    """The field at a path: its class, attrs field and spec (for the words)."""

    tp: Any
    spec: ArgSpec
    fields: tuple[str, ...]  # the names of the object the path ends in (for unknown keys)


def _where(cls: type, path: ArgPath, overrides: Mapping[str, ArgSpec]) -> _Where:
    tp: Any = cls
    spec = ArgSpec()
    for part in path:
        tp = _optional(tp)
        if isinstance(part, int):
            tp, spec = get_args(tp)[0], ArgSpec()
            continue
        field = attrs.fields_dict(tp)[part]
        spec = _spec(field, overrides if tp is cls else {})
        tp = _hints(tp)[part]
    inner = _optional(tp)
    names = tuple(attrs.fields_dict(inner)) if attrs.has(inner) else ()
    return _Where(tp, spec, names)


def _value_at(raw: Any, path: ArgPath) -> Any:
    for part in path:
        raw = raw[part]
    return raw


# ---- the converter ----------------------------------------------------------------------


class _Bad(Exception):
    """A value of the wrong JSON type (the message is written from the path)."""


class _OutOfBounds(_Bad):
    """A value of the right JSON type outside its bounds."""


def _string(value: Any, _: Any) -> str:
    if not isinstance(value, str):
        raise _Bad
    return value


def _integer(value: Any, _: Any) -> int:
    if isinstance(value, float) and value.is_integer():
        return int(value)  # JSON encoders sometimes emit 10.0 for 10
    # bool is an int subclass in Python but never a JSON integer
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Bad
    return value


def _boolean(value: Any, _: Any) -> bool:
    if not isinstance(value, bool):
        raise _Bad
    return value


def _literal(value: Any, tp: Any) -> Any:
    if not any(value == option and type(value) is type(option) for option in get_args(tp)):
        raise _Bad
    return value


def _array(value: Any, tp: Any) -> tuple[Any, ...]:
    if not isinstance(value, list):
        raise _Bad
    item_type = get_args(tp)[0]
    out: list[Any] = []
    for index, item in enumerate(value):
        try:
            out.append(_converter.structure(item, item_type))
        except Exception as exc:
            note = cattrs.IterableValidationNote(f"Structuring {tp!r} @ index {index}", index, item_type)
            exc.__notes__ = [*getattr(exc, "__notes__", []), note]
            raise IterableValidationError(f"While structuring {tp!r}", [exc], tp) from None
    return tuple(out)


def _object_hook(cls: type) -> Any:
    inner: Any = make_dict_structure_fn(cls, _converter, _cattrs_forbid_extra_keys=True)

    def structure(value: Any, _: Any) -> Any:
        if not isinstance(value, Mapping):
            raise _Bad
        return inner(value, cls)

    return structure


def _is_literal(tp: Any) -> bool:
    return get_origin(tp) is Literal


def _is_array(tp: Any) -> bool:
    return get_origin(tp) in (tuple, list)


_converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
_converter.register_structure_hook(str, _string)
_converter.register_structure_hook(int, _integer)
_converter.register_structure_hook(bool, _boolean)
_converter.register_structure_hook_func(lambda tp: _is_literal(tp), _literal)
_converter.register_structure_hook_func(lambda tp: _is_array(tp), _array)
_converter.register_structure_hook_factory(attrs.has, _object_hook)


def _first_failure(exc: BaseException, path: ArgPath) -> tuple[ArgPath, BaseException]:
    """The first thing wrong, in field order; unknown keys of an object come first."""
    if isinstance(exc, ClassValidationError):
        noted, plain = exc.group_exceptions()
        extra = [e for e in plain if isinstance(e, ForbiddenExtraKeysError)]
        if extra:
            return path, extra[0]
        if noted:
            return _first_failure(noted[0][0], (*path, noted[0][1].name))
        return path, plain[0]
    if isinstance(exc, IterableValidationError):
        inner, note = exc.group_exceptions()[0][0]
        return _first_failure(inner, (*path, note.index))
    return path, exc


def _message(cls: type, raw: Any, path: ArgPath, leaf: BaseException, overrides: Mapping[str, ArgSpec]) -> str:
    where = _where(cls, path, overrides)
    if isinstance(leaf, ForbiddenExtraKeysError):
        unknown = sorted(str(key) for key in leaf.extra_fields)[0]
        names = ", ".join(where.fields) or "(none)"
        return f"unknown argument '{_name((*path, unknown))}'; expected one of: {names}"
    if isinstance(leaf, KeyError):
        return f"missing required argument '{_name(path)}' ({_words(where.tp, where.spec)})"
    value = _value_at(raw, path)
    if isinstance(leaf, _OutOfBounds) and isinstance(value, float):
        value = int(value)  # an integral float (10.0) is shown as the integer it stands for
    high = where.spec.maximum
    if isinstance(leaf, _OutOfBounds) and where.spec.above and high is not None and _is_int(value) and value > high:
        return where.spec.above.format(value=value, maximum=high)
    return f"'{_name(path)}' must be {_words(where.tp, where.spec)}, got {show(value)}"


def _without_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def _is_int(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, float) and value.is_integer()
    )


def _out_of_bounds(cls: type, data: Any, overrides: Mapping[str, ArgSpec], path: ArgPath) -> ArgPath | None:
    """The first value (in field order) that has the right JSON type but is out of bounds."""
    if not isinstance(data, Mapping):
        return None
    for field in attrs.fields(cls):
        if field.name not in data:
            continue
        spec, value, here = _spec(field, overrides), data[field.name], (*path, field.name)
        tp = _optional(_hints(cls)[field.name])
        low, high = spec.minimum, spec.maximum
        if tp is int and _is_int(value) and ((low is not None and value < low) or (high is not None and value > high)):
            return here
        if _is_array(tp) and isinstance(value, list):
            if spec.min_items and len(value) < spec.min_items:
                return here
            item = _optional(get_args(tp)[0])
            for index, entry in enumerate(value if attrs.has(item) else []):
                found = _out_of_bounds(item, entry, {}, (*here, index))
                if found is not None:
                    return found
    return None


def _order(cls: type, path: ArgPath) -> tuple[int, ...]:
    """Where `path` comes when the arguments are read in field order (an object's unknown
    keys, at the object's own path, come before its fields)."""
    key: list[int] = []
    tp: Any = cls
    for part in path:
        tp = _optional(tp)
        if isinstance(part, int):
            key.append(part)
            tp = get_args(tp)[0]
        else:
            key.append(list(attrs.fields_dict(tp)).index(part))
            tp = _hints(tp)[part]
    return tuple(key)


def parse_args(cls: type[T], raw: Any, overrides: Mapping[str, ArgSpec] | None = None) -> T:
    """The typed args object for `raw` (the model's JSON), or ArgError saying what is wrong."""
    overrides = overrides or {}
    if not isinstance(raw, Mapping):
        raise ArgError(f"arguments must be a JSON object, got {show(raw)}")
    data = _without_nulls(raw)
    for name, spec in overrides.items():
        if spec.default is not KEEP:
            data.setdefault(name, spec.default)
    bound = _out_of_bounds(cls, data, overrides, ())
    try:
        obj = _converter.structure(data, cls)
    except (ClassValidationError, IterableValidationError, _Bad) as exc:
        path, leaf = _first_failure(exc, ())
        if bound is not None and _order(cls, bound) < _order(cls, path):
            path, leaf = bound, _OutOfBounds()
        raise ArgError(_message(cls, data, path, leaf, overrides)) from None
    if bound is not None:
        raise ArgError(_message(cls, data, bound, _OutOfBounds(), overrides))
    return obj


def dump_args(obj: Any) -> dict[str, Any]:
    """The args as JSON, defaults filled in and absent optionals left out."""
    return attr.asdict(obj, retain_collection_types=False, filter=lambda _, value: value is not None)


def required_names(cls: type) -> list[str]:
    return [f.name for f in attrs.fields(cls) if f.default is attrs.NOTHING]
