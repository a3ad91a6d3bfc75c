"""How a message field is spelled and checked on the wire: the one place both the
converter and the schema builder read.

Owns: `wire_name` (snake_case -> camelCase, `meta` -> `_meta`), the per-field metadata
keys (`wire`: a spelling that is not camelCase, e.g. ACP's `terminal_info`; `error`: the
exact error message a client gets when that field is missing or wrong, kept from the
hand-written checks the converter replaces; `minimum`/`maximum`/`non_empty`: value
checks; `schema`: the class that describes a field kept as raw JSON), classes whose
keys stay snake_case on the wire (`SNAKE_CASE = True`: the snapshot format), and the
`Meta` alias. Must not: import cattrs or any message module (they import this).
"""

from __future__ import annotations

from typing import Any, Union

import attrs

from ._json import JsonObject

Meta = Union[JsonObject, None]
"""ACP `_meta` on anything a client sends: accepted, never checked (keys are open)."""

WIRE = "tether_wire"
ERROR = "tether_error"
MINIMUM = "tether_minimum"
MAXIMUM = "tether_maximum"
NON_EMPTY = "tether_non_empty"
SCHEMA = "tether_schema"


def wire_name(name: str) -> str:
    """The camelCase wire spelling of a snake_case attribute name."""
    if name == "meta":
        return "_meta"
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def spelled(cls: type, field: attrs.Attribute[Any]) -> str:
    """The key of `field` of `cls` on the wire: its `wire` metadata; else its Python name
    in a class marked `SNAKE_CASE = True` (the snapshot format); else `wire_name`."""
    name = field.metadata.get(WIRE)
    if isinstance(name, str):
        return name
    if getattr(cls, "SNAKE_CASE", False):
        return field.name
    return wire_name(field.name)


def wire(
    name: str | None = None,
    *,
    default: Any = attrs.NOTHING,
    factory: Any = None,
    error: str | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
    non_empty: bool = False,
    schema: Any = None,
) -> Any:
    """An attrs field with wire metadata (see the module docstring). `error` may hold
    `{method}`, filled with the JSON-RPC method being checked."""
    metadata: JsonObject = {}
    for key, value in (
        (WIRE, name), (ERROR, error), (MINIMUM, minimum), (MAXIMUM, maximum), (SCHEMA, schema)
    ):
        if value is not None:
            metadata[key] = value
    if non_empty:
        metadata[NON_EMPTY] = True
    if factory is not None:
        return attrs.field(factory=factory, metadata=metadata)
    return attrs.field(default=default, metadata=metadata)
