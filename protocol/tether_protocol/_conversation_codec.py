"""The conversation's messages to and from their stored JSON, through msgspec.

Owns: ``message_from_json``/``messages_from_json`` (one msgspec conversion of a whole list,
the Structs checking themselves) and ``message_to_json``/``encode_message``, and the
rewording of msgspec's errors into ``ConversationError``'s (``.tool_calls[0].id is missing``).
Must not: do I/O or accept a shape it cannot give back (a round trip changes nothing).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, TypeAlias

import msgspec

from ._conversation_blocks import ConversationError, _Blocks, block_to_json, blocks_from_json
from ._conversation_model import (
    AssistantMessage,
    Compaction,
    CompactionSummary,
    GuardRecord,
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    _Stored,
)
from ._conversation_model import ContentBlocks as _ContentBlocks
from ._json import JsonObject, dumps_text, type_name

if TYPE_CHECKING:
    from collections.abc import Iterable


class _UserBody(_Stored, frozen=True, tag_field="role", tag="user"):
    """A stored user body before it is known to be a prompt or a compaction summary (one
    tag, two classes: msgspec's union cannot choose)."""

    content: _ContentBlocks
    guard: GuardRecord | None = None
    compaction: Compaction | None = None

    def typed(self) -> UserMessage | CompactionSummary:
        if self.compaction is None:
            return UserMessage(self.content, self.guard)
        return CompactionSummary(self.content, self.compaction)


_Decoded: TypeAlias = _UserBody | AssistantMessage | ToolResultMessage | SystemMessage
_BY_ROLE: dict[str, Any] = {"user": _UserBody, "assistant": AssistantMessage, "tool": ToolResultMessage}
_ROLES = ("assistant", "system", "tool", "user")


def _dec_hook(cls: type, data: Any) -> Any:
    if cls is _Blocks:
        try:
            return blocks_from_json(data, "")
        except ConversationError as exc:  # msgspec adds where the list is; \x1f keeps the parts apart
            raise ValueError(f"\x1f{exc.path}\x1f{exc.reason}") from None
    raise NotImplementedError(cls)


def _enc_hook(value: Any) -> Any:
    return block_to_json(value)


_ENCODER = msgspec.json.Encoder(enc_hook=_enc_hook)
_DECODER = msgspec.json.Decoder()


def message_from_json(data: Any, role: str | None = None) -> Message:
    """The typed message of a stored body (``role``: the record's, else the body's)."""
    if type(data) is not dict:
        raise ConversationError("", f"must be an object, not {type_name(data)}")
    role = role or data.get("role")
    cls = _BY_ROLE.get(role)  # type: ignore[arg-type]
    if cls is None:
        if role == "system":
            content = data.get("content", data.get("text", ""))
            return SystemMessage(content if type(content) is str else str(content))
        raise ConversationError(".role", f"must be one of {list(_ROLES)}, not {role!r}")
    if data.get("role", role) != role:
        data = {**data, "role": role}
    if cls is ToolResultMessage and type(content := data.get("content", "")) is not str:
        data = {**data, "content": json.dumps(content, ensure_ascii=False), "structured": content}
    try:
        decoded: _Decoded = msgspec.convert(data, cls, dec_hook=_dec_hook)
    except msgspec.ValidationError as exc:
        raise _reworded(exc) from None
    return decoded.typed() if isinstance(decoded, _UserBody) else decoded


_LIST_OF = list[_Decoded]


def messages_from_json(items: Iterable[Any]) -> list[Message]:
    """``message_from_json`` of each stored body, in one conversion (the body's role); an
    error's path starts ``[index]``."""
    items = items if isinstance(items, list) else list(items)
    try:
        decoded = msgspec.convert(items, _LIST_OF, dec_hook=_dec_hook)
    except msgspec.ValidationError:
        return _one_by_one(items)  # a structured tool result, a loose system body, or a mistake
    return [m.typed() if type(m) is _UserBody else m for m in decoded]  # type: ignore[misc]


def _one_by_one(items: list[Any]) -> list[Message]:
    out: list[Message] = []
    for index, item in enumerate(items):
        try:
            out.append(message_from_json(item))
        except ConversationError as exc:
            raise ConversationError(f"[{index}]{exc.path}", exc.reason) from None
    return out


def message_to_json(message: Message) -> JsonObject:
    """The stored body of a message (what ``message_from_json`` reads back)."""
    # through the text: msgspec's `to_builtins` keeps tuples, the stored JSON has lists
    out: JsonObject = _DECODER.decode(encode_message(message))
    return out


def messages_to_json(messages: Iterable[Message]) -> list[JsonObject]:
    return [message_to_json(m) for m in messages]


def encode_message(message: Message) -> bytes:
    """The stored body of a message as JSON text, encoded by msgspec at once."""
    try:
        if type(message) is ToolResultMessage and message.structured is not None:
            return _ENCODER.encode({**_builtins(message), "content": message.structured})
        return _ENCODER.encode(message)
    except UnicodeEncodeError:  # a lone surrogate (a file read as it was): U+FFFD, as stored before
        return dumps_text(_builtins(message)).encode()


def _builtins(message: Message) -> JsonObject:
    out: JsonObject = msgspec.to_builtins(message, enc_hook=_enc_hook)
    out.pop("structured", None)
    return out


def tool_call_from_json(data: Any, where: str = "") -> ToolCall:
    """One stored tool call ``{id, name, arguments, raw_arguments?}``; other keys (a
    checkpoint's ``started``) are the caller's. ``where`` prefixes an error's path."""
    if type(data) is not dict:
        raise ConversationError(where, f"must be an object {{id, name, arguments}}, not {type_name(data)}")
    try:
        return msgspec.convert(data, ToolCall)
    except msgspec.ValidationError as exc:
        error = _reworded(exc)
        raise ConversationError(where + error.path, error.reason) from None


# -- msgspec's errors in today's words --------------------------------------------------

_ERROR = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_WANT = {
    "str": "a string",
    "int": "an integer",
    "bool": "a boolean",
    "float": "a number",
    "array": "a list",
    "object": "an object",
}
_GOT = {"str": "a string", "array": "a list", "object": "an object", "bool": "a boolean"}


def _reworded(exc: msgspec.ValidationError) -> ConversationError:
    """msgspec's message (``Expected `str`, got `int` - at `$.tool_calls[0].id```) as
    today's ``ConversationError`` (``.tool_calls[0].id must be a string, not int``)."""
    found = _ERROR.match(str(exc))
    what, path = (found["what"], found["path"] or "") if found else (str(exc), "")
    if what.startswith("\x1f"):  # a block list's own error (`blocks_from_json`)
        _, inner, reason = what.split("\x1f", 2)
        return ConversationError(path + inner, reason)
    missing = re.match(r"Object missing required field `(.+)`", what)
    if missing:
        if missing[1] == "role" and not path:
            return ConversationError(".role", f"must be one of {list(_ROLES)}, not None")
        return ConversationError(f"{path}.{missing[1]}", "is missing")
    expected = re.match(r"Expected `([^`| ]+)[^`]*`, got `([^`]+)`", what)
    if expected:
        want = _WANT.get(expected[1], expected[1])
        if want == "an object" and re.search(r"\.tool_calls\[\d+\]$", path):
            want = "an object {id, name, arguments}"
        return ConversationError(path, f"must be {want}, not {_GOT.get(expected[2], expected[2])}")
    return ConversationError(path, what.replace("Invalid value", "has an unknown value"))
