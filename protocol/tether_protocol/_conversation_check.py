"""A quick check of stored message bodies, for checking many (a snapshot's import).

Owns: ``check_message_json``, which raises exactly what the converter
(``_conversation_json.message_from_json``) would, building nothing for a body that is
plainly right. Must not: accept anything the converter refuses (a property test holds
the two together), or decide anything the converter does not.
"""

from __future__ import annotations

from typing import Any

from ._conversation_json import message_from_json
from ._conversation_model import JsonObject

_NO_LIST: list[Any] = []
_NO_OBJECT: JsonObject = {}


def check_message_json(data: Any, role: str | None = None) -> None:
    """Raise what ``message_from_json(data, role)`` would raise, if anything. Builds
    nothing for a body that is plainly right (what checking a snapshot's 10,000 messages
    meets): only a body this quick look is unsure of goes through the converter."""
    if type(data) is not dict or not _plain(data, role or data.get("role")):
        message_from_json(data, role)


def _plain(data: JsonObject, role: Any) -> bool:
    """Whether the converter accepts ``data`` as it is (False: not sure, ask it)."""
    get = data.get
    if role == "assistant":
        calls = get("tool_calls", _NO_LIST)
        if not (
            type(get("text", "")) is str and type(get("thinking", "")) is str
            and type(get("thinking_signature", "")) is str and "thinking_blocks" not in data
            and type(calls) is list
        ):
            return False
        for c in calls:
            if not (
                type(c) is dict and type(c.get("id")) is str and type(c.get("name")) is str
                and type(c.get("arguments", _NO_OBJECT)) is dict and "raw_arguments" not in c
            ):
                return False
        return True
    if role == "tool":
        return (
            type(get("tool_call_id")) is str and type(get("name")) is str and type(get("content", "")) is str
            and type(get("is_error", False)) is bool and type(get("title", "")) is str
            and type(get("kind", "")) is str and "locations" not in data and "blocks" not in data
        )
    if role == "user":
        content = get("content")
        if type(content) is not list or "compaction" in data or "guard" in data:
            return False
        for b in content:
            if not (type(b) is dict and b.get("type") == "text" and type(b.get("text")) is str):
                return False
        return True
    return False
