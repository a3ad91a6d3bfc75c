"""The one cattrs converter for Tether's typed messages.

Owns: snake_case <-> camelCase renaming (`meta` <-> `_meta`), omitting `None` fields on
the way out, and turning structuring failures into `InvalidParams` that name the field.
Must not: be used on the streaming hot path (it is for params and results, not deltas).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, TypeVar

import typing

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from ._errors import InvalidParams

T = TypeVar("T")


def wire_name(name: str) -> str:
    if name == "meta":
        return "_meta"
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(omit_if_default=False, forbid_extra_keys=False)

    def structure_hook_factory(cls: type) -> Any:
        overrides = {a.name: override(rename=wire_name(a.name)) for a in attrs.fields(cls)}
        return make_dict_structure_fn(cls, conv, **overrides)

    def unstructure_hook_factory(cls: type) -> Any:
        overrides = {
            a.name: override(rename=wire_name(a.name), omit_if_default=a.default is None)
            for a in attrs.fields(cls)
        }
        return make_dict_unstructure_fn(cls, conv, **overrides)

    # Strict scalars: cattrs would turn 3 into "3" and "yes" into True; a client that sends
    # the wrong type should hear about it instead.
    def strict(kind: type, label: str) -> Any:
        def hook(value: Any, _: type) -> Any:
            if type(value) is not kind and not (kind is float and type(value) is int):
                raise TypeError(f"expected {label}, got {_json_type(value)}")
            return value

        return hook

    conv.register_structure_hook(str, strict(str, "a string"))
    conv.register_structure_hook(int, strict(int, "an integer"))
    conv.register_structure_hook(bool, strict(bool, "a boolean"))
    conv.register_structure_hook(float, strict(float, "a number"))

    def id_hook(value: Any, _: type) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise TypeError(f"expected a string or an integer, got {_json_type(value)}")
        return value

    conv.register_structure_hook_func(lambda t: t == typing.Union[int, str], id_hook)

    def object_hook(value: Any, _: type) -> Any:
        if type(value) is not dict:
            raise TypeError(f"expected an object, got {_json_type(value)}")
        return value

    conv.register_structure_hook_func(lambda t: t == dict[str, Any], object_hook)
    conv.register_structure_hook_factory(attrs.has, structure_hook_factory)

    def list_hook_factory(cls: Any) -> Any:
        (item_type,) = typing.get_args(cls) or (Any,)

        def hook(value: Any, _: type) -> Any:
            if type(value) is not list:
                raise TypeError(f"expected an array, got {_json_type(value)}")
            if item_type is Any:
                return value
            items = []
            for index, item in enumerate(value):
                try:
                    items.append(conv.structure(item, item_type))
                except Exception as exc:
                    detail = "; ".join(
                        _wire_path(d)
                        for d in cattrs.transform_error(exc, path="", format_exception=_format)
                    )
                    raise ValueError(f"item {index}: {detail.lstrip(': ')}") from None
            return items

        return hook

    conv.register_structure_hook_factory(
        lambda t: typing.get_origin(t) is list, list_hook_factory
    )

    # Unions of typed blocks (content blocks, updates) are told apart by their literal
    # `type`/`sessionUpdate` field, and an unknown tag is named in the error.
    def tagged_union_factory(cls: Any) -> Any:
        tag_field, table = _tag_table(cls)

        def hook(value: Any, _: type) -> Any:
            if type(value) is not dict:
                raise TypeError(f"expected an object, got {_json_type(value)}")
            tag = value.get(tag_field)
            member = table.get(tag)
            if member is None:
                raise ValueError(
                    f"unsupported {tag_field} {tag!r}; accepted: {', '.join(sorted(table))}"
                )
            return conv.structure(value, member)

        return hook

    conv.register_structure_hook_factory(_is_tagged_union, tagged_union_factory)
    conv.register_unstructure_hook_factory(attrs.has, unstructure_hook_factory)
    return conv


@lru_cache(maxsize=1)
def converter() -> cattrs.Converter:
    return _make_converter()


def structure(data: Any, cls: type[T], *, method: str = "") -> T:
    """Build `cls` from wire data, or raise InvalidParams naming the first bad field."""
    if data is None:
        data = {}
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
    return converter().unstructure(obj)


def _tag_table(cls: Any) -> tuple[str, dict[str, type]]:
    members = [m for m in typing.get_args(cls) if m is not type(None)]
    for tag_attr in ("type", "session_update"):
        table: dict[str, type] = {}
        for m in members:
            field = getattr(attrs.fields(m), tag_attr, None) if attrs.has(m) else None
            if field is None or not isinstance(field.default, str):
                break
            table[field.default] = m
        else:
            return wire_name(tag_attr), table
    raise TypeError(f"{cls} is not a tagged union")


def _is_tagged_union(cls: Any) -> bool:
    if typing.get_origin(cls) is not typing.Union:
        return False
    try:
        _tag_table(cls)
    except TypeError:
        return False
    return True


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "an array", dict: "an object"}.get(type(value), type(value).__name__)


def _describe(exc: Exception, method: str) -> str:
    where = f" for {method}" if method else ""
    try:
        details = cattrs.transform_error(exc, path="params", format_exception=_format)
    except Exception:
        details = [str(exc)]
    cleaned = [_wire_path(d) for d in details[:3]]
    return f"invalid params{where}: " + "; ".join(cleaned)


def _format(exc: BaseException, _type: Any) -> str:
    if typing.get_origin(_type) is typing.Literal:
        return "must be one of: " + ", ".join(map(str, typing.get_args(_type)))
    if isinstance(exc, KeyError):
        return "required field missing"
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
