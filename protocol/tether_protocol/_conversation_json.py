"""The one converter between the conversation's typed values and their stored JSON.

Owns: ``message_from_json``/``message_to_json`` (and the same for content blocks), with
validation errors that name the bad field (``ConversationError``). Hand-written rather
than cattrs-generated: loading a 10,000-message session runs it for every message, and
each error must say exactly which field is wrong, as the store's validator always has.
Must not: do I/O or accept a shape it cannot give back (a round trip changes nothing).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ._conversation_model import (
    AssistantMessage,
    AudioBlock,
    CompactionSummary,
    ContentBlock,
    ConversationError,
    EmbeddedResource,
    GuardFinding,
    GuardRecord,
    ImageBlock,
    JsonObject,
    Location,
    Message,
    OtherBlock,
    RedactedThinking,
    ResourceContents,
    ResourceLink,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ._json import type_name

# -- the converter -------------------------------------------------------------------

_ROLES = ("assistant", "system", "tool", "user")


def _bad(path: str, expected: str, value: Any) -> ConversationError:
    return ConversationError(path, f"must be {expected}, not {type_name(value)}")


def _opt_str(data: JsonObject, key: str, path: str) -> str | None:
    value = data.get(key)
    if value is None or type(value) is str:
        return value
    raise _bad(f"{path}.{key}", "a string", value)


def _req_str(data: JsonObject, key: str, path: str) -> str:
    value = data.get(key)
    if type(value) is str:
        return value
    if key not in data:
        raise ConversationError(f"{path}.{key}", "is missing")
    raise _bad(f"{path}.{key}", "a string", value)


def _extra(data: JsonObject, known: frozenset[str]) -> JsonObject:
    """The keys the model does not name (``annotations``, ``_meta``...), kept as they are."""
    return {} if data.keys() <= known else {k: v for k, v in data.items() if k not in known}


_TEXT = frozenset({"type", "text"})
_IMAGE = frozenset({"type", "data", "mimeType", "uri"})
_LINK = frozenset({"type", "uri", "name", "mimeType"})
_RESOURCE = frozenset({"type", "resource"})
_CONTENTS = frozenset({"uri", "text", "blob", "mimeType"})


def block_from_json(data: Any, path: str = "") -> ContentBlock:
    """One stored content block; ``path`` prefixes an error's field path."""
    if type(data) is not dict:
        raise _bad(path, "an object", data)
    kind = data.get("type")
    if kind == "text":
        text = data.get("text", "")
        if type(text) is not str:
            raise _bad(f"{path}.text", "a string", text)
        return TextBlock(text, {} if len(data) == 2 else _extra(data, _TEXT))
    if kind == "resource_link":
        uri = _opt_str(data, "uri", path) or ""
        return ResourceLink(uri, _opt_str(data, "name", path), _opt_str(data, "mimeType", path), _extra(data, _LINK))
    if kind == "resource":
        inner = data.get("resource", {})
        if type(inner) is not dict:
            raise _bad(f"{path}.resource", "an object", inner)
        where = f"{path}.resource"
        contents = ResourceContents(
            _opt_str(inner, "uri", where) or "", _opt_str(inner, "text", where), _opt_str(inner, "blob", where),
            _opt_str(inner, "mimeType", where), _extra(inner, _CONTENTS),
        )
        return EmbeddedResource(contents, _extra(data, _RESOURCE))
    if kind == "image":
        return ImageBlock(
            _opt_str(data, "data", path), _opt_str(data, "mimeType", path), _opt_str(data, "uri", path),
            _extra(data, _IMAGE),
        )
    if kind == "audio":
        return AudioBlock(_opt_str(data, "data", path), _opt_str(data, "mimeType", path), _extra(data, _IMAGE))
    if kind is not None and type(kind) is not str:
        raise _bad(f"{path}.type", "a string", kind)
    return OtherBlock(kind or "", dict(data))  # kept whole, its "type" (if any) included


def _put(out: JsonObject, key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


def block_to_json(block: ContentBlock) -> JsonObject:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text, **block.extra}
    if isinstance(block, OtherBlock):
        return dict(block.fields)
    if isinstance(block, EmbeddedResource):
        res = block.resource
        inner: JsonObject = {"uri": res.uri}
        _put(inner, "mimeType", res.mime_type)
        _put(inner, "text", res.text)
        _put(inner, "blob", res.blob)
        return {"type": "resource", "resource": {**inner, **res.extra}, **block.extra}
    out: JsonObject
    if isinstance(block, ResourceLink):
        out = {"type": "resource_link", "uri": block.uri}
        _put(out, "name", block.name)
    else:
        out = {"type": "image" if isinstance(block, ImageBlock) else "audio"}
        _put(out, "data", block.data)
    _put(out, "mimeType", block.mime_type)
    if isinstance(block, ImageBlock):
        _put(out, "uri", block.uri)
    out.update(block.extra)
    return out


def blocks_from_json(data: Any, path: str = ".content") -> tuple[ContentBlock, ...]:
    if type(data) is not list:
        raise _bad(path, "a list of content blocks", data)
    out: list[ContentBlock] = []
    for i, item in enumerate(data):
        # the usual block, a plain text one, without a call (and without formatting a path)
        if type(item) is dict and len(item) == 2 and type(text := item.get("text")) is str and item["type"] == "text":
            out.append(TextBlock(text, {}))
        else:
            out.append(block_from_json(item, f"{path}[{i}]"))
    return tuple(out)


def blocks_to_json(blocks: Iterable[ContentBlock]) -> list[JsonObject]:
    return [block_to_json(b) for b in blocks]


def message_from_json(data: Any, role: str | None = None) -> Message:
    """The typed message of a stored body (``role``: the record's, else the body's)."""
    if type(data) is not dict:
        raise _bad("", "an object", data)
    role = role or data.get("role")
    if role == "assistant":
        return _assistant(data)
    if role == "tool":
        return _tool(data)
    if role == "user":
        return _user(data)
    if role == "system":
        content = data.get("content", data.get("text", ""))
        return SystemMessage(content if type(content) is str else str(content))
    raise ConversationError(".role", f"must be one of {list(_ROLES)}, not {role!r}")


def _user(data: JsonObject) -> UserMessage | CompactionSummary:
    compaction = data.get("compaction")
    if "compaction" in data and type(compaction) is not dict:
        raise _bad(".compaction", "an object", compaction)
    content = blocks_from_json(data.get("content"))
    if compaction is not None:
        replaced, kept = compaction.get("replaced", 0), compaction.get("kept")
        if type(replaced) is not int:
            raise _bad(".compaction.replaced", "an integer", replaced)
        if kept is not None and type(kept) is not int:
            raise _bad(".compaction.kept", "an integer", kept)
        return CompactionSummary(content, replaced, kept)
    guard = data.get("guard")
    return UserMessage(content, None if guard is None else _guard(guard))


def _guard(data: Any) -> GuardRecord:
    if type(data) is not dict:
        raise _bad(".guard", "an object", data)
    findings = data.get("findings", [])
    if type(findings) is not list:
        raise _bad(".guard.findings", "a list", findings)
    out = []
    for i, item in enumerate(findings):
        where = f".guard.findings[{i}]"
        if type(item) is not dict:
            raise _bad(where, "an object", item)
        out.append(GuardFinding(_req_str(item, "pattern", where), _req_str(item, "excerpt", where)))
    return GuardRecord(tuple(out), bool(data.get("blocked", False)))


def _assistant(data: JsonObject) -> AssistantMessage:
    text = data.get("text", "")
    if type(text) is not str:
        raise _bad(".text", "a string", text)
    thinking = _opt_str(data, "thinking", "")
    calls = data.get("tool_calls", _NO_LIST)
    if type(calls) is not list:
        raise _bad(".tool_calls", "a list", calls)
    blocks = data.get("thinking_blocks", _NO_LIST)
    if type(blocks) is not list:
        raise _bad(".thinking_blocks", "a list", blocks)
    return AssistantMessage(
        text, thinking, _opt_str(data, "thinking_signature", ""),
        tuple([_thinking_block(b, i) for i, b in enumerate(blocks)]) if blocks else (),
        tuple([_call(c, i) for i, c in enumerate(calls)]) if calls else (),
    )


_NO_LIST: list[Any] = []
_NO_OBJECT: JsonObject = {}


def _thinking_block(data: Any, index: int) -> ThinkingBlock | RedactedThinking:
    where = f".thinking_blocks[{index}]"
    if type(data) is not dict:
        raise _bad(where, "an object", data)
    if data.get("type") == "redacted_thinking":
        return RedactedThinking(_req_str(data, "data", where))
    return ThinkingBlock(_opt_str(data, "thinking", where) or "", _opt_str(data, "signature", where))


def _call(data: Any, index: int) -> ToolCall:
    if (  # the usual call, without formatting a path
        type(data) is dict and type(call_id := data.get("id")) is str and type(name := data.get("name")) is str
        and type(arguments := data.get("arguments", _NO_OBJECT)) is dict and "raw_arguments" not in data
    ):
        return ToolCall(call_id, name, {} if arguments is _NO_OBJECT else arguments)
    return tool_call_from_json(data, f".tool_calls[{index}]")


def tool_call_from_json(data: Any, where: str = "") -> ToolCall:
    """One stored tool call ``{id, name, arguments, raw_arguments?}``; other keys (a
    checkpoint's ``started``) are the caller's. ``where`` prefixes an error's path."""
    if type(data) is not dict:
        raise _bad(where, "an object {id, name, arguments}", data)
    arguments = data.get("arguments", {})
    if type(arguments) is not dict:
        raise _bad(f"{where}.arguments", "an object", arguments)
    return ToolCall(
        _req_str(data, "id", where), _req_str(data, "name", where), arguments, _opt_str(data, "raw_arguments", where)
    )


def _tool(data: JsonObject) -> ToolResultMessage:
    call_id, name = _req_str(data, "tool_call_id", ""), _req_str(data, "name", "")
    content = data.get("content", "")
    structured = None
    if type(content) is not str:
        structured, content = content, json.dumps(content, ensure_ascii=False)
    is_error = data.get("is_error", False)
    if type(is_error) is not bool:
        raise _bad(".is_error", "a boolean", is_error)
    locations, blocks = data.get("locations"), data.get("blocks")
    return ToolResultMessage(
        call_id, name, content, is_error, _opt_str(data, "title", ""), _opt_str(data, "kind", ""),
        () if locations is None else _locations(locations), data.get("ledger"), structured,
        () if blocks is None else blocks_from_json(blocks, ".blocks"),
    )


def _locations(data: Any) -> tuple[Location, ...]:
    if type(data) is not list:
        raise _bad(".locations", "a list", data)
    out = []
    for i, item in enumerate(data):
        where = f".locations[{i}]"
        if type(item) is not dict:
            raise _bad(where, "an object", item)
        line = item.get("line")
        if line is not None and type(line) is not int:
            raise _bad(f"{where}.line", "an integer", line)
        out.append(Location(_req_str(item, "path", where), line))
    return tuple(out)


def message_to_json(message: Message) -> JsonObject:
    """The stored body of a message (what ``message_from_json`` reads back)."""
    if isinstance(message, AssistantMessage):
        return _assistant_json(message)
    if isinstance(message, ToolResultMessage):
        return _tool_json(message)
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.content}
    out: JsonObject = {"role": "user", "content": blocks_to_json(message.content)}
    if isinstance(message, CompactionSummary):
        compaction: JsonObject = {"replaced": message.replaced}
        _put(compaction, "kept", message.kept)
        out["compaction"] = compaction
    elif message.guard is not None:
        out["guard"] = {
            "findings": [{"pattern": f.pattern, "excerpt": f.excerpt} for f in message.guard.findings],
            "blocked": message.guard.blocked,
        }
    return out


def _assistant_json(message: AssistantMessage) -> JsonObject:
    out: JsonObject = {"role": "assistant", "text": message.text}
    _put(out, "thinking", message.thinking)
    _put(out, "thinking_signature", message.thinking_signature)
    if message.thinking_blocks:
        out["thinking_blocks"] = [_thinking_json(b) for b in message.thinking_blocks]
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments}
            if c.raw_arguments is None
            else {"id": c.id, "name": c.name, "arguments": c.arguments, "raw_arguments": c.raw_arguments}
            for c in message.tool_calls
        ]
    return out


def _thinking_json(block: ThinkingBlock | RedactedThinking) -> JsonObject:
    if isinstance(block, RedactedThinking):
        return {"type": "redacted_thinking", "data": block.data}
    if block.signature is None:
        return {"type": "thinking", "thinking": block.thinking}
    return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}


def _tool_json(message: ToolResultMessage) -> JsonObject:
    out: JsonObject = {
        "role": "tool",
        "tool_call_id": message.tool_call_id,
        "name": message.name,
        "content": message.content if message.structured is None else message.structured,
        "is_error": message.is_error,
    }
    _put(out, "title", message.title)
    _put(out, "kind", message.kind)
    if message.locations:
        out["locations"] = [
            {"path": loc.path} if loc.line is None else {"path": loc.path, "line": loc.line}
            for loc in message.locations
        ]
    _put(out, "ledger", message.ledger)
    if message.blocks:
        out["blocks"] = blocks_to_json(message.blocks)
    return out
