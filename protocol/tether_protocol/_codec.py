"""The protocol model's codec (msgspec; docs/decisions/0001, 0017).

Owns: the Struct bases `Wire` (camelCase, None left out) and `Stored` (snake_case), `decode` /
`convert` (to a Struct, or `InvalidParams` in the protocol's words: `reworded`, `explained`, a
class's `WIRE_ERRORS`/`KIND_ERRORS`), `NonEmpty`, `Described`, `Meta` and `ENCODER` (raw frames).
Must not: hold message classes (one module per area declares them).
"""

from __future__ import annotations

import re
import types
import typing
from typing import Annotated, Any, TypeVar

import msgspec

from . import _json
from ._errors import InvalidParams
from ._json import JsonObject

if typing.TYPE_CHECKING:
    from collections.abc import Callable

T = TypeVar("T")

NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]
"""A string that must not be empty (schema: `minLength: 1`)."""


class Described:
    """`Annotated[Any, Described(T)]`: raw JSON that the schema describes as ``T`` (read
    as it is; what checks it words its own errors, e.g. the store a snapshot's)."""

    def __init__(self, shape: Any) -> None:
        self.shape = shape


Meta = JsonObject | None
"""ACP `_meta` on anything a client sends: accepted, never checked (keys are open);
declared as `msgspec.field(default=None, name="_meta")`."""

_json.structs_as_builtins = msgspec.to_builtins  # Structs anywhere in `_json.dumps`' input
ENCODER = msgspec.json.Encoder()


class Wire(msgspec.Struct, rename="camel", omit_defaults=True):
    """The wire's base: camelCase keys, None-defaulted fields left out while None (a field
    with another written default is `X | UnsetType = UNSET`: `omit_defaults` leaves out any
    default)."""


class Stored(msgspec.Struct, omit_defaults=True):
    """The store's and the snapshot's base: snake_case keys, as stored today."""


def decode(data: bytes | str, cls: type[T], *, method: str) -> T:
    """``cls`` from JSON text, or `InvalidParams` in today's words."""
    try:
        return msgspec.json.decode(data, type=cls)
    except msgspec.ValidationError as exc:
        raise InvalidParams(reworded(exc, cls, msgspec.json.decode(data), method)) from None


def convert(data: Any, cls: type[T], *, method: str, at: str = "") -> T:
    """``cls`` from already-parsed JSON (dicts and lists), or `InvalidParams` in today's words
    (``at``: the key of the params ``data`` was read from, for the path in the words)."""
    try:
        return msgspec.convert(data, type=cls)
    except msgspec.ValidationError as exc:
        raise InvalidParams(reworded(exc, cls, data, method, [at] if at else [])) from None


_LABELS = {
    "str": "a string",
    "int": "an integer",
    "int | str": "a string or an integer",
    "bool": "a boolean",
    "float": "a number",
    "array": "an array",
    "object": "an object",
    "null": "null",
}
_ERROR = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def reworded(
    exc: msgspec.ValidationError,
    cls: Any,
    data: Any,
    method: str,
    where: list[str | int] | None = None,
    dec_hook: Callable[[type, Any], Any] | None = None,
) -> str:
    """msgspec's error as today's message: `invalid params for METHOD: params.PATH: WHY`.
    msgspec gives text only, so its message is parsed and the path walked through the
    declared types beside the data (a Literal's choices in declared order, a union's tags)."""
    own = _own_error(cls, data)
    if own is not None:
        return own.replace("{method}", method or "params")
    where = where or []
    # `dec_hook`: the one the failed convert used (v2's open unions), so a field it takes is not named
    found = _every_error(cls, data, where, dec_hook)[:3] if isinstance(data, dict) else []
    if not found:  # (a tag no member has: the walk does not see tags)
        steps, why = explained(exc, cls, data)
        found = [f"params.{_path([*where, *steps])}: {why}"]
    return f"invalid params{f' for {method}' if method else ''}: " + "; ".join(found)


def _every_error(
    cls: Any,
    data: JsonObject,
    where: list[str | int],
    dec_hook: Callable[[type, Any], Any] | None = None,
) -> list[str]:
    """Each field of ``cls`` that ``data`` gets wrong, in field order (as the attrs converter
    listed them): a field holding a Struct is walked into, any other is worded alone."""
    if not (isinstance(cls, type) and issubclass(cls, msgspec.Struct)):
        return []
    found: list[str] = []
    for field in msgspec.structs.fields(cls):
        key = field.encode_name
        if key not in data:
            if field.required:
                choices = _choices(field.type)
                found.append(
                    f"params.{_path([*where, key])}: required field missing"
                    + (f"; send one of: {', '.join(choices)}" if choices else "")
                )
            continue
        try:
            msgspec.convert(data[key], type=field.type, dec_hook=dec_hook)
        except msgspec.ValidationError as exc:
            inner = _struct_in(field.type)
            nested = _every_error(inner, data[key], [*where, key], dec_hook) if isinstance(data[key], dict) else []
            if not nested:
                steps, why = explained(exc, field.type, data[key])
                nested = [f"params.{_path([*where, key, *steps])}: {why}"]
            found.extend(nested)
    return found


def _struct_in(tp: Any) -> Any:
    """The one Struct class ``tp`` is (or is beside None), else None."""
    members = [m for m in typing.get_args(tp) if m is not type(None)] if _is_union(tp) else [tp]
    structs = [m for m in members if isinstance(m, type) and issubclass(m, msgspec.Struct)]
    return structs[0] if len(members) == 1 and len(structs) == 1 else None


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


def _choices(tp: Any) -> list[str]:
    """The values a `Literal` (alone or in a union) allows, in declared order."""
    if typing.get_origin(tp) is typing.Literal:
        return [str(a) for a in typing.get_args(tp)]
    return [c for m in typing.get_args(tp) for c in _choices(m)] if _is_union(tp) else []


def _own_error(cls: Any, data: Any) -> str | None:
    """The first field with its own words that is missing or wrong, in field order: those
    fields are checked before the rest, as the hand-written checks did. `WIRE_ERRORS` words
    any mistake in the field; `KIND_ERRORS` ("X must be an object") only a value of the
    wrong kind, a mistake inside it is worded by its path."""
    own: dict[str, str] = getattr(cls, "WIRE_ERRORS", {})
    kind_only: dict[str, str] = getattr(cls, "KIND_ERRORS", {})
    if not (own or kind_only) or not isinstance(data, dict):
        return None
    for field in msgspec.structs.fields(cls):
        key = field.encode_name
        message = own.get(key) or kind_only.get(key)
        if message is None:
            continue
        if key not in data:
            if field.required:
                return message
            continue
        try:
            msgspec.convert(data[key], type=field.type)
        except msgspec.ValidationError as exc:
            if key in own or not explained(exc, field.type, data[key])[0]:
                return message
    return None


def explained(exc: msgspec.ValidationError, cls: Any, data: Any) -> tuple[list[str | int], str]:
    """Where in ``data`` (wire keys and list indexes) and why ``cls`` refused it."""
    found = _ERROR.match(str(exc))
    what, path = (found["what"], found["path"] or "") if found else (str(exc), "")
    steps: list[str | int] = [int(i) if i else k for k, i in _STEP.findall(path)]
    missing = re.match(r"Object missing required field `(.+)`", what)
    if missing:
        steps.append(missing[1])
    tp = _declared(cls, data, steps)
    own_tag = _tag_value(cls, data, steps)
    if own_tag is not None:  # a class's own tag (not a union's choice) is worded as a Literal
        return steps, f"must be one of: {own_tag}"
    if what.startswith("Expected") and _choices(tp):  # a Literal of the wrong type: its values
        why = "must be one of: " + ", ".join(_choices(tp))
    elif what.startswith("Expected"):
        want, got = [*re.findall(r"`([^`]+)`", what), "", ""][:2]
        want = want.removesuffix(" | null")  # an optional field: today's words name the type alone
        why = f"expected {_LABELS.get(want, want)}, got {_LABELS.get(got, got)}"
    elif missing and _union_tags(_declared(cls, data, steps[:-1]), missing[1]):
        why = f"unsupported {missing[1]} None; accepted: {', '.join(_union_tags(_declared(cls, data, steps[:-1]), missing[1]))}"
        steps = steps[:-1]
    elif missing:
        choices = _choices(tp)
        why = "required field missing" + (f"; send one of: {', '.join(choices)}" if choices else "")
    elif what.startswith("Invalid enum value"):
        why = "must be one of: " + ", ".join(_choices(tp))
    elif what.startswith("Invalid value") and steps and steps[-1] == "type":
        steps = steps[:-1]
        tags = sorted(str(m.__struct_config__.tag) for m in typing.get_args(_declared(cls, data, steps)) if _tagged(m))
        why = f"unsupported type {what.split(' ', 2)[2]}; accepted: {', '.join(tags)}"
    else:
        why = what
    return steps, why


def _declared(cls: Any, data: Any, steps: list[str | int]) -> Any:
    """The declared type at the end of ``steps`` (a union resolved by the data's tag)."""
    tp: Any = cls
    value = data
    for step in steps:
        tp = _member(tp, value)
        if isinstance(step, int):
            args = typing.get_args(tp)
            tp = args[0] if args else Any
            value = value[step] if isinstance(value, list) and step < len(value) else None
            continue
        if not (isinstance(tp, type) and issubclass(tp, msgspec.Struct)):
            return tp  # a union's tag no member has: the union says what it accepts
        field = {f.encode_name: f for f in msgspec.structs.fields(tp)}.get(step)
        tp = field.type if field else Any
        value = value.get(step) if isinstance(value, dict) else None
    return tp


def _tag_value(cls: Any, data: Any, steps: list[str | int]) -> str | None:
    """The tag of the Struct at ``steps[:-1]`` when ``steps[-1]`` is its tag field, else None."""
    if not steps or not isinstance(steps[-1], str):
        return None
    owner = _declared(cls, data, steps[:-1])
    config = getattr(owner, "__struct_config__", None)
    return str(config.tag) if config is not None and config.tag_field == steps[-1] else None


def _union_tags(tp: Any, tag_field: str) -> list[str]:
    """The tags of a union whose members are told apart by ``tag_field`` (sorted), else []."""
    configs = [getattr(m, "__struct_config__", None) for m in typing.get_args(tp)] if _is_union(tp) else []
    return sorted(str(c.tag) for c in configs if c is not None and c.tag_field == tag_field)


def _tagged(member: Any) -> bool:
    config = getattr(member, "__struct_config__", None)
    return config is not None and config.tag_field is not None


def _member(tp: Any, value: Any) -> Any:
    """The union member ``value`` is (by its tag), or ``tp`` itself."""
    if not _is_union(tp):
        return tp
    for member in typing.get_args(tp):
        config = getattr(member, "__struct_config__", None)
        if config and config.tag_field and isinstance(value, dict) and value.get(config.tag_field) == config.tag:
            return member
    return tp


def _path(steps: list[str | int]) -> str:
    """Today's spelling of a path: `prompt: item 2: .resource.text` (cattrs' list items)."""
    out = ""
    for step in steps:
        out += f": item {step}: " if isinstance(step, int) else (f".{step}" if out else step)
    return out.rstrip(": ")
