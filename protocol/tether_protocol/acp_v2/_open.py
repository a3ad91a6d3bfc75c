"""ACP's open tagged unions (a catch-all member: a future or `_`-prefixed tag) in msgspec.

Owns: `OpenUnion`, the base the generated module gives each open union, and the hooks
that decode one (a known tag: its variant Struct, checked; any other: the object as it
came, kept whole so it can be passed on) and encode one (its `value`).
Must not: know any message type (the generated area modules do).
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec


class OpenUnion:
    """One value of an open union: `value` is the known variant's Struct, or the unknown
    object (a dict) as it came."""

    __slots__ = ("value",)
    tag_field: ClassVar[str]
    known: ClassVar[dict[str, type[Any]]]

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.value == self.value

    def __hash__(self) -> int:
        return hash((type(self), id(self.value)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.value!r})"

    @property
    def tag(self) -> str:
        value = self.value
        while isinstance(value, OpenUnion):  # a variant that is an open union (`state_update`)
            value = value.value
        if isinstance(value, dict):
            return str(value.get(self.tag_field))
        return str(value.__struct_config__.tag)


def dec_hook(tp: type[Any], obj: Any) -> Any:
    if isinstance(tp, type) and issubclass(tp, OpenUnion):
        if not isinstance(obj, dict):
            raise TypeError(f"Expected `object`, got `{type(obj).__name__}`")
        tag = obj.get(tp.tag_field)
        if not isinstance(tag, str):
            raise TypeError(f"Object missing required field `{tp.tag_field}`")
        variant = tp.known.get(tag)
        if variant is None:
            return tp(obj)
        if issubclass(variant, OpenUnion):
            return tp(dec_hook(variant, obj))
        return tp(msgspec.convert(obj, variant, dec_hook=dec_hook))
    raise NotImplementedError(f"no decoder for {tp!r}")


def enc_hook(obj: Any) -> Any:
    if isinstance(obj, OpenUnion):
        return obj.value
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")
