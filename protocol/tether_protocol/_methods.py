"""The method table of protocol v1 resolved: each entry of `_method_table.V1_SPECS` a `Method`.

Owns: `V1` and the tables derived from it (by name, direction and kind), read by
`protocol/schema.json` (`x-tether-methods`) and the tests. ACP v2's messages are `acp_v2`'s.
Must not: name a method or a class (`_method_table` does), or be imported on the start path
(it imports every message module).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias, Union

from ._method_table import V1_SPECS, MethodSpec, resolve
from ._method_table import Direction as Direction  # (named here too, as before)
from ._method_table import Kind as Kind
from ._sessions import EmptyParams as EmptyParams  # (named here too, as before)

NULL_RESULT: Any = type(None)
"""The result of a request answered with `null` (`shutdown`)."""

# What a method's params or result is structured as: a message class, a list of one, a
# union of them, or None. Any: typing has no type for such a type form.
_Shape: TypeAlias = Any


@dataclass(frozen=True, slots=True)
class Method:
    """One JSON-RPC method. `result` is None for a notification (it has none)."""

    name: str
    direction: Direction
    kind: Kind
    params: _Shape
    result: _Shape = None

    @property
    def extension(self) -> bool:
        return self.name.startswith("_")


def _resolved(spec: MethodSpec[Any, Any]) -> Method:
    if spec.kind == "notification":
        result: _Shape = None
    elif spec.result is None:
        result = NULL_RESULT
    else:
        result = resolve(spec.result)
        if spec.result_or_null:
            result = Union[result, None]  # noqa: UP007 (a runtime type form for msgspec and the schema)
    return Method(spec.name, spec.direction, spec.kind, resolve(spec.params), result)


V1: tuple[Method, ...] = tuple(_resolved(spec) for spec in V1_SPECS)

METHODS: dict[str, Method] = {m.name: m for m in V1}
"""`V1` by method name."""

# The tables by direction and kind (older names; derived from V1).
CLIENT_REQUESTS: dict[str, tuple[_Shape, _Shape]] = {
    m.name: (m.params, m.result) for m in V1 if m.direction == "client->agent" and m.kind == "request"
}
CLIENT_NOTIFICATIONS: dict[str, _Shape] = {
    m.name: m.params for m in V1 if m.direction != "agent->client" and m.kind == "notification"
}
AGENT_REQUESTS: dict[str, tuple[_Shape, _Shape]] = {
    m.name: (m.params, m.result) for m in V1 if m.direction == "agent->client" and m.kind == "request"
}
AGENT_NOTIFICATIONS: dict[str, _Shape] = {
    m.name: m.params for m in V1 if m.direction != "client->agent" and m.kind == "notification"
}
