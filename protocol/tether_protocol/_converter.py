"""The one cattrs converter for Tether's typed messages, used at each edge.

Owns: snake_case <-> wire renaming (`_fields.spelled`: camelCase, `meta` <-> `_meta`,
snake_case formats kept), omitting `None` fields on the way out, strict scalars, telling
union members apart (by their tag — `type`, `sessionUpdate`, `outcome` — or by trying
each), the field checks declared in `_fields.wire()`, and turning a structuring failure
into one `InvalidParams` that names the field: either the field's own message (the ones
the hand-written checks gave) or `invalid params for <method>: params.<field>: <why>`.
The bridge to the msgspec model (docs/decisions/0001): a Struct class, or a union of them,
is msgspec's (`_codec.convert` / `msgspec.to_builtins`), wherever it sits, so message
modules move one at a time (an attrs class may hold Structs, never the other way round).
Must not: be used on the streaming hot path (it is for params and results, not deltas).
"""

from __future__ import annotations

import typing
from functools import lru_cache
from typing import Any, Callable, TypeVar

import attrs
import cattrs
import msgspec
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from ._codec import convert, explained
from ._errors import InvalidParams
from ._fields import ERROR, MAXIMUM, MINIMUM, NON_EMPTY, spelled, wire_name
from ._json import JsonObject

T = TypeVar("T")
Hook = Callable[[Any, Any], Any]
TAG_ATTRS = ("type", "session_update", "outcome")
_ID_TYPES = (typing.Union[int, str], typing.Union[int, str, None])
_SCALARS: tuple[tuple[type, str], ...] = (
    (str, "a string"), (int, "an integer"), (bool, "a boolean"), (float, "a number"),
)


class FieldError(ValueError):
    """A field's own error message (`_fields.wire(error=...)`), reported as it is."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# ---- scalars and plain JSON ----------------------------------------------------------


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "an array", dict: "an object"}.get(type(value), type(value).__name__)


def _strict(kind: type, label: str) -> Hook:
    # cattrs would turn 3 into "3" and "yes" into True; a client that sends the wrong
    # type should hear about it instead.
    def hook(value: Any, _: Any) -> Any:
        if type(value) is not kind and not (kind is float and type(value) is int):
            raise TypeError(f"expected {label}, got {_json_type(value)}")
        return value

    return hook


def _id_hook(value: Any, tp: Any) -> Any:
    if value is None and type(None) in typing.get_args(tp):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"expected a string or an integer, got {_json_type(value)}")
    return value


def _object_hook(value: Any, _: Any) -> Any:
    if type(value) is not dict:
        raise TypeError(f"expected an object, got {_json_type(value)}")
    return value


def _none_hook(value: Any, _: Any) -> None:
    if value is not None:
        raise TypeError(f"expected null, got {_json_type(value)}")


# ---- unions --------------------------------------------------------------------------


def tag_table(cls: Any) -> tuple[str, dict[str, type]] | None:
    """The tag attribute and tag -> member of a union whose members all carry one."""
    members = [m for m in typing.get_args(cls) if m is not type(None)]
    if not members or not all(isinstance(m, type) and attrs.has(m) for m in members):
        return None
    for tag_attr in TAG_ATTRS:
        table: dict[str, type] = {}
        for member in members:
            field = getattr(attrs.fields(member), tag_attr, None)
            if field is None or not isinstance(field.default, str):
                break
            table[field.default] = member
        else:
            return tag_attr, table
    return None


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) is typing.Union


def _attrs_members(tp: Any) -> list[type]:
    return [m for m in typing.get_args(tp) if isinstance(m, type) and attrs.has(m)]


def _is_list(tp: Any) -> bool:
    return typing.get_origin(tp) is list


def _is_tagged_union(tp: Any) -> bool:
    return _is_union(tp) and tag_table(tp) is not None


def _is_untagged_union(tp: Any) -> bool:
    members = [m for m in typing.get_args(tp) if m is not type(None)]
    return (
        _is_union(tp) and len(members) > 1 and len(_attrs_members(tp)) == len(members)
        and tag_table(tp) is None
    )


# ---- the msgspec model (the bridge) ------------------------------------------------------


def _is_struct(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, msgspec.Struct)


def _is_struct_union(tp: Any) -> bool:
    members = [m for m in typing.get_args(tp) if m is not type(None)]
    return _is_union(tp) and bool(members) and all(_is_struct(m) for m in members)


def _struct_hook(value: Any, tp: Any) -> Any:
    """A Struct (or a union of them) inside an attrs class: msgspec builds it, and its
    error reads as the converter's (`.resource.text: required field missing`)."""
    try:
        return msgspec.convert(value, type=tp)
    except msgspec.ValidationError as exc:
        steps, why = explained(exc, tp, value)
        where = "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in steps)
        raise ValueError(f"{where}: {why}" if where else why) from None


# ---- the converter -------------------------------------------------------------------


class _Hooks:
    """The hook factories of one converter (each a small method, not a closure)."""

    def __init__(self, conv: cattrs.Converter) -> None:
        self.conv = conv

    def structure_attrs(self, cls: type) -> Hook:
        attrs.resolve_types(cls)
        # Any: cattrs spells its **kwargs' type beside its named flags (bool), so overrides are Any here
        renames: dict[str, Any] = {a.name: override(rename=spelled(cls, a)) for a in attrs.fields(cls)}
        base: Hook = make_dict_structure_fn(cls, self.conv, **renames)
        checked = [(a, spelled(cls, a)) for a in attrs.fields(cls) if _has_checks(a)]
        if not checked:
            return base

        def hook(value: Any, tp: Any) -> Any:
            if isinstance(value, dict):
                for field, key in checked:
                    self._check_field(field, key, value)
            return base(value, tp)

        return hook

    def _check_field(self, field: attrs.Attribute[Any], key: str, data: JsonObject) -> None:
        message = field.metadata.get(ERROR)
        if key not in data:
            if field.default is attrs.NOTHING:
                raise FieldError(message or "required field missing")
            return
        value = data[key]
        try:
            self.conv.structure(value, typing.cast(Any, field.type))
        except Exception as exc:
            raise FieldError(message or str(exc)) from None
        if value is None:
            return
        minimum, maximum = field.metadata.get(MINIMUM), field.metadata.get(MAXIMUM)
        number = isinstance(value, (int, float))  # a bound checks numbers; a str of a Union passes
        too_small = number and minimum is not None and value < minimum
        too_big = number and maximum is not None and value > maximum
        empty = field.metadata.get(NON_EMPTY) and not value
        if too_small or too_big or empty:
            raise FieldError(message or f"{key}: out of range")

    def unstructure_attrs(self, cls: type) -> Callable[[Any], Any]:
        renames: dict[str, Any] = {
            a.name: override(rename=spelled(cls, a), omit_if_default=a.default is None)
            for a in attrs.fields(cls)
        }
        return make_dict_unstructure_fn(cls, self.conv, **renames)

    def list_of(self, tp: Any) -> Hook:
        (item_type,) = typing.get_args(tp) or (Any,)
        conv = self.conv

        def hook(value: Any, _: Any) -> Any:
            if type(value) is not list:
                raise TypeError(f"expected an array, got {_json_type(value)}")
            if item_type is Any:
                return value
            items = []
            for index, item in enumerate(value):
                try:
                    items.append(conv.structure(item, item_type))
                except FieldError:
                    raise
                except Exception as exc:
                    raise ValueError(f"item {index}: {_item_detail(exc)}") from None
            return items

        return hook

    def tagged_union(self, tp: Any) -> Hook:
        found = tag_table(tp)
        assert found is not None
        tag_attr, table = found
        tag_field = wire_name(tag_attr)
        conv = self.conv

        def hook(value: Any, _: Any) -> Any:
            if value is None and type(None) in typing.get_args(tp):
                return None
            if type(value) is not dict:
                raise TypeError(f"expected an object, got {_json_type(value)}")
            tag = value.get(tag_field)
            member = table.get(tag) if isinstance(tag, str) else None
            if member is None:
                raise ValueError(
                    f"unsupported {tag_field} {tag!r}; accepted: {', '.join(sorted(table))}"
                )
            return conv.structure(value, member)

        return hook

    def untagged_union(self, tp: Any) -> Hook:
        members = _attrs_members(tp)
        conv = self.conv

        def hook(value: Any, _: Any) -> Any:
            if value is None and type(None) in typing.get_args(tp):
                return None
            problems = []
            for member in members:
                try:
                    return conv.structure(value, member)
                except Exception as exc:
                    problems.append(f"not a {member.__name__} ({_item_detail(exc)})")
            raise ValueError("; ".join(problems))

        return hook


def _has_checks(field: attrs.Attribute[Any]) -> bool:
    return any(key in field.metadata for key in (ERROR, MINIMUM, MAXIMUM, NON_EMPTY))


def _item_detail(exc: Exception) -> str:
    details = cattrs.transform_error(exc, path="", format_exception=_format)
    return "; ".join(_wire_path(d) for d in details).lstrip(": ")


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(omit_if_default=False, forbid_extra_keys=False)
    hooks = _Hooks(conv)
    for kind, label in _SCALARS:
        conv.register_structure_hook(kind, _strict(kind, label))
    conv.register_structure_hook(type(None), _none_hook)
    conv.register_structure_hook_func(lambda t: t in _ID_TYPES, _id_hook)
    conv.register_structure_hook_func(lambda t: t == JsonObject, _object_hook)
    conv.register_structure_hook_func(lambda t: _is_struct(t) or _is_struct_union(t), _struct_hook)
    conv.register_unstructure_hook_func(_is_struct, msgspec.to_builtins)
    conv.register_structure_hook_factory(attrs.has, hooks.structure_attrs)
    conv.register_structure_hook_factory(_is_list, hooks.list_of)
    conv.register_structure_hook_factory(_is_tagged_union, hooks.tagged_union)
    conv.register_structure_hook_factory(_is_untagged_union, hooks.untagged_union)
    conv.register_unstructure_hook_factory(attrs.has, hooks.unstructure_attrs)
    return conv


@lru_cache(maxsize=1)
def converter() -> cattrs.Converter:
    return _make_converter()


def structure(data: Any, cls: type[T], *, method: str = "") -> T:
    """Build `cls` from wire data, or raise InvalidParams naming the first bad field."""
    if data is None:
        data = {}
    if _is_struct(cls) and isinstance(data, dict):
        return convert(data, cls, method=method)
    if not isinstance(data, dict):
        raise InvalidParams(
            f"invalid params{f' for {method}' if method else ''}: expected an object, "
            f"got {type(data).__name__}"
        )
    try:
        return converter().structure(data, cls)
    except Exception as exc:  # cattrs raises ClassValidationError / BaseValidationError
        raise InvalidParams(_describe(exc, method)) from None


def unstructure(obj: Any) -> Any:
    if isinstance(obj, msgspec.Struct):
        return msgspec.to_builtins(obj)
    return converter().unstructure(obj)


# ---- error messages ------------------------------------------------------------------


def _field_error(exc: BaseException) -> FieldError | None:
    if isinstance(exc, FieldError):
        return exc
    for sub in getattr(exc, "exceptions", ()):
        found = _field_error(sub)
        if found is not None:
            return found
    return None


def _describe(exc: Exception, method: str) -> str:
    own = _field_error(exc)
    if own is not None:
        return own.message.replace("{method}", method or "params")
    where = f" for {method}" if method else ""
    try:
        details = cattrs.transform_error(exc, path="params", format_exception=_format)
    except Exception:
        details = [str(exc)]
    cleaned = [_wire_path(d) for d in details[:3]]
    return f"invalid params{where}: " + "; ".join(cleaned)


def _format(exc: BaseException, _type: Any) -> str:
    choices = ", ".join(map(str, typing.get_args(_type))) if typing.get_origin(_type) is typing.Literal else ""
    if isinstance(exc, KeyError):  # missing: say so first, then what to send
        return "required field missing" + (f"; send one of: {choices}" if choices else "")
    if choices:
        return f"must be one of: {choices}"
    if isinstance(exc, (TypeError, ValueError)) and str(exc):
        return str(exc)
    return f"invalid value ({type(exc).__name__})"


def _wire_path(detail: str) -> str:
    # cattrs reports Python attribute names in its paths; editors know the camelCase ones.
    msg, sep, path = detail.rpartition(" @ ")
    if not sep:
        return detail
    parts = [wire_name(p) if p and p[0].isalpha() else p for p in path.split(".")]
    return f"{'.'.join(parts)}: {msg}"
