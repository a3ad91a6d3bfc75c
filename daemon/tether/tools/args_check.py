"""Checking what the model sent against a tool's args class: one cattrs converter.

Owns: the converter (strict JSON types: a bool is not an integer, "3" is not 3; closed objects), the bounds
check, and the message naming the first wrong argument in schema order with what was expected.
Must not: know about specific tools, or be imported before a tool is first called (cattrs is slow to import).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, get_args

import attrs
import cattrs
from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
)
from cattrs.gen import make_dict_structure_fn

from tether.tools.args import (
    KEEP,
    ArgError,
    ArgPath,
    ArgSpec,
    hints,
    is_array,
    is_literal,
    optional,
    show,
    spec_of,
)

__all__ = ["check"]

T = TypeVar("T")


# ---- what is expected, in words -------------------------------------------------------


def _words(tp: Any, spec: ArgSpec) -> str:
    tp = optional(tp)
    if is_literal(tp):
        return "one of " + ", ".join(show(option) for option in get_args(tp))
    if is_array(tp):
        item = optional(get_args(tp)[0])
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
        tp = optional(tp)
        if isinstance(part, int):
            tp, spec = get_args(tp)[0], ArgSpec()
            continue
        field = attrs.fields_dict(tp)[part]
        spec = spec_of(field, overrides if tp is cls else {})
        tp = hints(tp)[part]
    inner = optional(tp)
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


_converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
_converter.register_structure_hook(str, _string)
_converter.register_structure_hook(int, _integer)
_converter.register_structure_hook(bool, _boolean)
_converter.register_structure_hook_func(lambda tp: is_literal(tp), _literal)
_converter.register_structure_hook_func(lambda tp: is_array(tp), _array)
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
        spec, value, here = spec_of(field, overrides), data[field.name], (*path, field.name)
        tp = optional(hints(cls)[field.name])
        low, high = spec.minimum, spec.maximum
        if tp is int and _is_int(value) and ((low is not None and value < low) or (high is not None and value > high)):
            return here
        if is_array(tp) and isinstance(value, list):
            if spec.min_items and len(value) < spec.min_items:
                return here
            item = optional(get_args(tp)[0])
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
        tp = optional(tp)
        if isinstance(part, int):
            key.append(part)
            tp = get_args(tp)[0]
        else:
            key.append(list(attrs.fields_dict(tp)).index(part))
            tp = hints(tp)[part]
    return tuple(key)


def check(cls: type[T], raw: Any, overrides: Mapping[str, ArgSpec]) -> T:
    """The typed args object for `raw` (the model's JSON), or ArgError saying what is wrong."""
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
