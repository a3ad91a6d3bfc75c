"""An MCP server's `elicitation/create`, checked before the user sees it, and the user's answer read back.

Owns: what Tether relays (a form: a message of at most ``MAX_MESSAGE`` characters, a flat schema of at most
``MAX_FIELDS`` primitive fields and ``MAX_SCHEMA_BYTES`` as JSON, as MCP's forms are), why one is refused, and the
``ElicitResult`` of the user's answer (only the fields the form declared, of its kinds; else ``cancel``).
Must not: ask anyone (the turn's relay does: server/elicitation.py) or hold the connection.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

MAX_MESSAGE = 4000  # characters of the server's message
MAX_FIELDS = 32
MAX_SCHEMA_BYTES = 32 * 1024
_PRIMITIVES = frozenset({"string", "number", "integer", "boolean", "array"})
_ACTIONS = frozenset({"accept", "decline", "cancel"})


def form_problem(params: types.ElicitRequestFormParams) -> str | None:
    """Why this form is not shown to the user (None: it is), in words the server is told."""
    if not params.message.strip() or len(params.message) > MAX_MESSAGE:
        return f"its message must be 1 to {MAX_MESSAGE} characters, not {len(params.message)}"
    schema = params.requested_schema
    size = len(json.dumps(schema, ensure_ascii=False))
    if size > MAX_SCHEMA_BYTES:
        return f"its requestedSchema is {size} bytes as JSON, over Tether's limit of {MAX_SCHEMA_BYTES}"
    properties = schema.get("properties", {})
    if schema.get("type") != "object" or not isinstance(properties, dict):
        return 'its requestedSchema must be {"type": "object", "properties": {...}}'
    if len(properties) > MAX_FIELDS:
        return f"its requestedSchema has {len(properties)} fields, over Tether's limit of {MAX_FIELDS}"
    for name, field in properties.items():
        kind = field.get("type") if isinstance(field, dict) else None
        if kind not in _PRIMITIVES or (kind == "array" and not isinstance(field.get("items"), dict)):
            return (
                f"its field {name[:80]!r} must be a string, number, integer, boolean or array of choices "
                f"(MCP's flat forms), not {kind if isinstance(kind, str) else type(field).__name__}"
            )
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) and r in properties for r in required):
        return "its requestedSchema's required must list names of its properties"
    return None


def elicit_result(answer: dict[str, Any], schema: dict[str, Any]) -> types.ElicitResult:
    """The server's answer: the user's ``{action, content?}``; an accepted form keeps only its
    declared fields of a form's kinds, and one missing a required field is ``cancel``."""
    action = answer.get("action")
    if action not in _ACTIONS:
        return types.ElicitResult(action="cancel")
    if action != "accept":
        return types.ElicitResult(action=action)
    content = answer.get("content")
    content = content if isinstance(content, dict) else {}
    kept = {k: v for k, v in content.items() if k in schema.get("properties", {}) and _form_value(v)}
    if not all(name in kept for name in schema.get("required", [])):
        return types.ElicitResult(action="cancel")
    return types.ElicitResult(action="accept", content=kept)


def _form_value(value: object) -> bool:
    if isinstance(value, list):
        return all(isinstance(v, str) for v in value)
    return isinstance(value, (str, int, float, bool))
