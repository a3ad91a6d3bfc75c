"""Tool arguments declared as attrs classes: the JSON Schema the model is shown and the check of its answer.

Owns: `arg()`, `ArgSpec`, `schema_of()` (closed objects), `parse_args()` (through args_check.py, imported on
first use; a null optional counts as absent) and `dump_args()` (defaults filled in). Types: docs/decisions/0009.
Must not: know about specific tools, touch the filesystem, or depend on the agent loop.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any, Literal, TypeAlias, TypeVar, Union, get_args, get_origin

import attr
import attrs

from tether_protocol._json import JsonObject

__all__ = [
    "KEEP",
    "ArgError",
    "ArgPath",
    "JsonSchema",
    "ArgSpec",
    "arg",
    "dump_args",
    "hints",
    "is_array",
    "is_literal",
    "optional",
    "parse_args",
    "required_names",
    "schema_of",
    "show",
    "spec_of",
]

T = TypeVar("T")
_META = "tether.arg"
# A JSON Schema as generated from an arguments class (an edge: the model's API reads it).
JsonSchema: TypeAlias = JsonObject
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


def spec_of(field: attrs.Attribute[Any], overrides: Mapping[str, ArgSpec]) -> ArgSpec:
    found = overrides.get(field.name) or field.metadata.get(_META)
    return found if isinstance(found, ArgSpec) else ArgSpec()


def _default(field: attrs.Attribute[Any], spec: ArgSpec) -> Any:
    return field.default if spec.default is KEEP else spec.default


def optional(tp: Any) -> Any:
    """`X | None` -> X (an optional argument); anything else unchanged."""
    if get_origin(tp) in (Union, types.UnionType):
        rest = [a for a in get_args(tp) if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return tp


@cache
def hints(cls: type) -> dict[str, object]:
    return typing.get_type_hints(cls)


def is_literal(tp: Any) -> bool:
    return get_origin(tp) is Literal


def is_array(tp: Any) -> bool:
    return get_origin(tp) in (tuple, list)


def _type_schema(tp: Any) -> JsonSchema:
    tp = optional(tp)
    if tp is str:
        return {"type": "string"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if is_literal(tp):
        return {"type": "string", "enum": list(get_args(tp))}
    if is_array(tp):
        return {"type": "array", "items": _type_schema(get_args(tp)[0])}
    if attrs.has(tp):
        return schema_of(tp)
    raise TypeError(f"no JSON Schema for argument type {tp!r}")


def _property(cls: type, field: attrs.Attribute[Any], spec: ArgSpec) -> JsonSchema:
    prop = _type_schema(hints(cls)[field.name])
    bounds = {"minimum": spec.minimum, "maximum": spec.maximum, "minItems": spec.min_items}
    prop.update({key: value for key, value in bounds.items() if value is not None})
    default = _default(field, spec)
    if default is not attrs.NOTHING and default is not None:
        prop["default"] = default
    if spec.description is not None:
        prop["description"] = spec.description
    return prop


def schema_of(cls: type, overrides: Mapping[str, ArgSpec] | None = None) -> JsonSchema:
    """The JSON Schema (a closed object) the model is given for the args class `cls`."""
    overrides = overrides or {}
    fields = attrs.fields(cls)
    return {
        "type": "object",
        "properties": {f.name: _property(cls, f, spec_of(f, overrides)) for f in fields},
        "required": [f.name for f in fields if f.default is attrs.NOTHING],
        "additionalProperties": False,
    }


def show(value: Any) -> str:
    """A value as the model wrote it (JSON)."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def parse_args(cls: type[T], raw: Any, overrides: Mapping[str, ArgSpec] | None = None) -> T:
    """The typed args object for `raw` (the model's JSON), or ArgError saying what is wrong.

    The converter lives in args_check.py, imported on the first call: cattrs costs ~12 ms
    to import, which the daemon's start (and `session/new`, which lists the schemas)
    should not pay.
    """
    from tether.tools.args_check import check

    return check(cls, raw, overrides or {})


def dump_args(obj: Any) -> JsonObject:
    """The args as JSON, defaults filled in and absent optionals left out."""
    return attr.asdict(obj, retain_collection_types=False, filter=lambda _, value: value is not None)


def required_names(cls: type) -> list[str]:
    return [f.name for f in attrs.fields(cls) if f.default is attrs.NOTHING]
