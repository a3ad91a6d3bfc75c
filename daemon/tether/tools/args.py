"""Tool arguments declared as msgspec Structs: the JSON Schema the model is shown and the check of its answer.

Owns: `ToolArgs` (closed, frozen), `with_argument()` (one argument's bounds set per tool instance), `schema_of()`,
`parse_args()` (msgspec's strict decode; a null optional counts as absent; when refused, the message names the
first wrong argument in schema order) and `dump_args()`. Types: docs/decisions/0009.
Must not: know about specific tools, touch the filesystem, or depend on the agent loop.
"""

from __future__ import annotations

import json
import types
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Literal, TypeAlias, TypeVar, Union, cast, get_args, get_origin

import msgspec

from tether_protocol import JsonObject

__all__ = [
    "ArgError",
    "ArgPath",
    "JsonSchema",
    "ToolArgs",
    "dump_args",
    "parse_args",
    "required_names",
    "schema_of",
    "show",
    "with_argument",
]

T = TypeVar("T")
# A JSON Schema as generated from an arguments class (an edge: the model's API reads it).
JsonSchema: TypeAlias = JsonObject
ArgPath = tuple["str | int", ...]  # where in the arguments: ("edits", 1, "old_text")


class ToolArgs(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A tool's arguments: a closed JSON object. A field is `Annotated[X, msgspec.Meta(description=...,
    ge=..., le=..., min_length=...)]`; `Meta(extra={"above": ...})` is what the model is told of a value
    over `le` ({value} and {maximum} filled in) instead of the bounds in words."""


class ArgError(Exception):
    """The arguments do not fit the class; the message names the argument (no tool name)."""


def with_argument(cls: type[T], name: str, annotation: Any, default: Any) -> type[T]:
    """`cls` with argument `name` re-declared (bounds from configuration); callers cache it."""
    made = msgspec.defstruct(
        cls.__name__, [(name, annotation, default)], bases=(cls,), module=cls.__module__,
        frozen=True, forbid_unknown_fields=True,
    )
    return cast("type[T]", made)


# ---- one field, read from its annotation -----------------------------------------------


@dataclass(frozen=True, slots=True)
class _Spec:
    """A field's type without `| None` and `Annotated`, and what its `Meta` says."""

    annotation: Any  # what msgspec checks a value against
    base: Any  # str, int, bool, a Literal, tuple[X, ...] or a ToolArgs class
    minimum: int | None = None
    maximum: int | None = None
    min_items: int | None = None
    description: str | None = None
    above: str | None = None


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    spec: _Spec
    required: bool
    default: Any


def _optional(tp: Any) -> Any:
    """`X | None` -> X (an optional argument); anything else unchanged."""
    if get_origin(tp) in (Union, types.UnionType):
        rest = [a for a in get_args(tp) if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return tp


def _spec(tp: Any) -> _Spec:
    tp = _optional(tp)
    if get_origin(tp) is not Annotated:
        return _Spec(tp, tp)
    base, *extras = get_args(tp)
    metas = [m for m in extras if isinstance(m, msgspec.Meta)]

    def first(attribute: str) -> Any:
        return next((getattr(m, attribute) for m in metas if getattr(m, attribute) is not None), None)

    above = next((m.extra["above"] for m in metas if m.extra and "above" in m.extra), None)
    return _Spec(tp, base, first("ge"), first("le"), first("min_length"), first("description"), above)


@cache
def _fields(cls: type) -> tuple[_Field, ...]:
    return tuple(
        _Field(f.name, _spec(f.type), f.required, f.default) for f in msgspec.structs.fields(cls)
    )


def _is_args(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, ToolArgs)


def _is_array(tp: Any) -> bool:
    return get_origin(tp) in (tuple, list)


def required_names(cls: type) -> list[str]:
    return [f.name for f in _fields(cls) if f.required]


# ---- the schema ---------------------------------------------------------------------
# msgspec.json.schema would sort a Literal's choices (the plan's steps would read
# completed, in_progress, pending), wrap each optional in anyOf with null and move nested
# objects to $defs: the model is shown what the annotations say, in their order, as before.


def _type_schema(base: Any) -> JsonSchema:
    if base in (str, bool, int):
        return {"type": {str: "string", bool: "boolean", int: "integer"}[base]}
    if get_origin(base) is Literal:
        return {"type": "string", "enum": list(get_args(base))}
    if _is_array(base):
        return {"type": "array", "items": _type_schema(_spec(get_args(base)[0]).base)}
    if _is_args(base):
        return schema_of(base)
    raise TypeError(f"no JSON Schema for argument type {base!r}")


def _property(field: _Field) -> JsonSchema:
    spec = field.spec
    prop = _type_schema(spec.base)
    bounds = {"minimum": spec.minimum, "maximum": spec.maximum, "minItems": spec.min_items}
    prop.update({key: value for key, value in bounds.items() if value is not None})
    if not field.required and field.default is not None:
        prop["default"] = field.default
    if spec.description is not None:
        prop["description"] = spec.description
    return prop


def schema_of(cls: type) -> JsonSchema:
    """The JSON Schema (a closed object) the model is given for the args class `cls`."""
    fields = _fields(cls)
    return {
        "type": "object",
        "properties": {f.name: _property(f) for f in fields},
        "required": [f.name for f in fields if f.required],
        "additionalProperties": False,
    }


# ---- the check ------------------------------------------------------------------------


def show(value: Any) -> str:
    """A value as the model wrote it (JSON)."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _without_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, (list, tuple)):  # a tuple: a dumped array
        return [_without_nulls(item) for item in value]
    return value


def _as_decoded(value: Any) -> Any:
    """Nulls left out, and an integral float (JSON encoders sometimes write 10.0 for 10) an int."""
    if isinstance(value, Mapping):
        return {key: _as_decoded(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_as_decoded(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def parse_args(cls: type[T], raw: Any) -> T:
    """The typed args object for `raw` (the model's JSON), or ArgError saying what is wrong."""
    if not isinstance(raw, Mapping):
        raise ArgError(f"arguments must be a JSON object, got {show(raw)}")
    try:
        return msgspec.convert(_as_decoded(raw), cls)
    except msgspec.ValidationError as exc:
        # msgspec names the first problem in the order the keys came; the model is told the
        # first in the order the schema lists them, in the words below
        raise ArgError(_first_wrong(cls, _without_nulls(raw), ()) or str(exc)) from None


def dump_args(obj: Any) -> JsonObject:
    """The args as JSON, defaults filled in and absent optionals left out."""
    return cast("JsonObject", _without_nulls(msgspec.to_builtins(obj)))


# ---- what the model is told -------------------------------------------------------------


def _name(path: ArgPath) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _words(spec: _Spec) -> str:
    base = spec.base
    if get_origin(base) is Literal:
        return "one of " + ", ".join(show(option) for option in get_args(base))
    if _is_array(base):
        item = _spec(get_args(base)[0]).base
        text = "an array"
        if item in (str, int, bool) or _is_args(item):
            text += " of " + {str: "strings", int: "integers", bool: "booleans"}.get(item, "objects")
        least = spec.min_items
        return text + (f" with at least {least} item{'' if least == 1 else 's'}" if least else "")
    text = {str: "a string", int: "an integer", bool: "a boolean"}.get(base, "an object")
    low, high = spec.minimum, spec.maximum
    if low is not None and high is not None:
        return f"{text} between {low} and {high}"
    if low is not None:
        return f"{text} >= {low}"
    return text if high is None else f"{text} <= {high}"


def _first_wrong(cls: type, data: Mapping[str, Any], path: ArgPath) -> str | None:
    """What is wrong with `data` as `cls`: an unknown key first, then the fields in order."""
    fields = _fields(cls)
    names = [f.name for f in fields]
    unknown = sorted(str(key) for key in data if key not in names)
    if unknown:
        return f"unknown argument '{_name((*path, unknown[0]))}'; expected one of: {', '.join(names) or '(none)'}"
    for field in fields:
        here = (*path, field.name)
        if field.name in data:
            wrong = _wrong_value(field.spec, data[field.name], here)
            if wrong is not None:
                return wrong
        elif field.required:
            return f"missing required argument '{_name(here)}' ({_words(field.spec)})"
    return None


def _wrong_value(spec: _Spec, value: Any, here: ArgPath) -> str | None:
    if _is_args(spec.base) and isinstance(value, Mapping):
        return _first_wrong(spec.base, value, here)
    if _is_array(spec.base) and isinstance(value, list) and len(value) >= (spec.min_items or 0):
        item = _spec(get_args(spec.base)[0])
        return next((w for i, v in enumerate(value) if (w := _wrong_value(item, v, (*here, i))) is not None), None)
    try:
        msgspec.convert(_as_decoded(value), type=spec.annotation)
    except msgspec.ValidationError:
        return _refusal(spec, value, here)
    return None


def _refusal(spec: _Spec, value: Any, here: ArgPath) -> str:
    if spec.base is int and isinstance(value, float) and value.is_integer():
        value = int(value)  # an integral float (10.0) is shown as the integer it stands for
    high = spec.maximum
    over = high is not None and type(value) is int and value > high
    if spec.above and over:
        return spec.above.format(value=value, maximum=high)
    return f"'{_name(here)}' must be {_words(spec)}, got {show(value)}"
