"""`structure` / `unstructure`: the protocol's message classes (msgspec Structs) at each edge.

Owns: a message class or union built from wire data (`None` is `{}`), or one `InvalidParams` in
the protocol's words (`_codec.convert`), and a message's wire form (`msgspec.to_builtins`).
Must not: be used on the streaming hot path (there the one encoder, `_json.dumps`, writes Structs).
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from ._codec import convert
from ._errors import InvalidParams

T = TypeVar("T")


def structure(data: Any, cls: type[T], *, method: str = "") -> T:
    """Build ``cls`` from wire data, or raise InvalidParams naming what is wrong."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InvalidParams(
            f"invalid params{f' for {method}' if method else ''}: expected an object, got {type(data).__name__}"
        )
    return convert(data, cls, method=method)


def unstructure(obj: Any) -> Any:
    """``obj`` (a Struct, or lists and dicts holding them) as wire JSON built-ins."""
    return msgspec.to_builtins(obj)
