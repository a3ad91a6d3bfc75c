"""The protocol model's codec (msgspec, docs/decisions/0001): the Struct bases and the one
decode that turns msgspec's `ValidationError` into today's `-32602` wording.

Owns: `Wire` (camelCase, left out while None) and `Stored` (snake_case) bases, `decode` /
`convert` (JSON bytes or built-ins -> a Struct, or `InvalidParams`), `reworded` and
`explained` (its parts), a params class's own messages (`WIRE_ERRORS`: wire key -> the
words a client gets, `{method}` filled in), `NonEmpty`, and `ENCODER` (msgspec's, for a frame whose raw JSON is
`msgspec.Raw` in orjson's spelling: the replay). Elsewhere Structs go out through
`_json.dumps`, which this module hands `msgspec.to_builtins`.
Must not: hold message classes (one module per area declares them) or import attrs/cattrs.
"""

from __future__ import annotations

import re
import types
import typing
from typing import Annotated, Any, TypeVar

import msgspec

from . import _json
from ._errors import InvalidParams

T = TypeVar("T")

NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]
"""A string that must not be empty (schema: `minLength: 1`)."""

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


def convert(data: Any, cls: type[T], *, method: str) -> T:
    """``cls`` from already-parsed JSON (dicts and lists), or `InvalidParams` in today's words."""
    try:
        return msgspec.convert(data, type=cls)
    except msgspec.ValidationError as exc:
        raise InvalidParams(reworded(exc, cls, data, method)) from None


_LABELS = {"str": "a string", "int": "an integer", "bool": "a boolean", "float": "a number",
           "array": "an array", "object": "an object", "null": "null"}
_ERROR = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def reworded(exc: msgspec.ValidationError, cls: Any, data: Any, method: str) -> str:
    """msgspec's error as today's message: `invalid params for METHOD: params.PATH: WHY`.
    msgspec gives text only, so its message is parsed and the path walked through the
    declared types beside the data (a Literal's choices in declared order, a union's tags)."""
    own = _own_error(cls, data)
    if own is not None:
        return own.replace("{method}", method)
    steps, why = explained(exc, cls, data)
    return f"invalid params for {method}: params.{_path(steps)}: {why}"


def _own_error(cls: Any, data: Any) -> str | None:
    """The first field with its own words (`WIRE_ERRORS`) that is missing or wrong, in field
    order: those fields are checked before the rest, as the hand-written checks did."""
    own: dict[str, str] = getattr(cls, "WIRE_ERRORS", {})
    if not own or not isinstance(data, dict):
        return None
    for field in msgspec.structs.fields(cls):
        message = own.get(field.encode_name)
        if message is None:
            continue
        if field.encode_name not in data:
            if field.required:
                return message
            continue
        try:
            msgspec.convert(data[field.encode_name], type=field.type)
        except msgspec.ValidationError:
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
    if what.startswith("Expected"):
        want, got = [*re.findall(r"`([^`]+)`", what), "", ""][:2]
        want = want.removesuffix(" | null")  # an optional field: today's words name the type alone
        why = f"expected {_LABELS.get(want, want)}, got {_LABELS.get(got, got)}"
    elif missing:
        choices = typing.get_args(tp) if typing.get_origin(tp) is typing.Literal else ()
        why = "required field missing" + (f"; send one of: {', '.join(map(str, choices))}" if choices else "")
    elif what.startswith("Invalid enum value"):
        why = "must be one of: " + ", ".join(map(str, typing.get_args(tp)))
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


def _tagged(member: Any) -> bool:
    config = getattr(member, "__struct_config__", None)
    return config is not None and config.tag_field is not None


def _member(tp: Any, value: Any) -> Any:
    """The union member ``value`` is (by its tag), or ``tp`` itself."""
    if typing.get_origin(tp) not in (typing.Union, types.UnionType):
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
