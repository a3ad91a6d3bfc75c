"""The conversation as typed values: content blocks, messages, tool calls and results.

Owns: the one model of a conversation that the daemon passes from the wire to the store
(server -> agent -> providers -> store -> snapshots): msgspec Structs whose encoding is
the JSON object each message is stored as (``message_from_json`` / ``message_to_json`` /
``encode_message``; docs/decisions/0001), and the one text rendering of content blocks.
Must not: do I/O, know a provider's API shape, or know a wire version's shape.

Stored JSON (the SQLite ``messages.body`` column and a snapshot's ``messages[].body``,
snapshot format 1; unchanged by this model, old stores load as they are):

  user       {"role": "user", "content": [block...], "guard"?: {...}}
  summary    {"role": "user", "content": [block...], "compaction": {"replaced", "kept"?}}
  assistant  {"role": "assistant", "text", "thinking"?, "thinking_signature"?,
              "thinking_blocks"?: [{"type": "thinking", "thinking", "signature"} |
              {"type": "redacted_thinking", "data"}], "tool_calls"?: [{"id", "name",
              "arguments", "raw_arguments"?}]}
  tool       {"role": "tool", "tool_call_id", "name", "content": str, "is_error",
              "title"?, "kind"?, "locations"?: [{"path", "line"?}], "ledger"?,
              "blocks"?: [block...]}
  system     {"role": "system", "content": str}

A block is stored as an MCP content block (``{"type": "text", "text"}``, ``image``,
``audio``, ``resource_link``, ``resource``); keys the model does not name
(``annotations``, ``_meta``) ride along in ``extra``, and a block of an unknown type is
an ``OtherBlock`` kept as it came, so a round trip changes nothing.

Wire-version neutrality (ACP v1 today, v2 later): nothing here is a ``session/update``
or any other ACP message. Rendering the model to the wire (v1's chunks and
``tool_call``/``tool_call_update``; v2's ``user_message``/``agent_message`` upserts keyed
by ``messageId``, ``tool_call_update`` upserts, ``state_update``) belongs to the
server's update layer, one renderer per version. The v2 ``messageId`` can be derived
from a message's store ``seq``; content blocks are the same five MCP types in v1 and
v2, and v2's extensible ``type`` is what ``OtherBlock`` already keeps.

Errors: ``ConversationError`` (a ``ValueError``) names the bad field as a path from the
message (``.tool_calls[0].id is missing``); ``str(error)`` is that path and the reason.
"""

from __future__ import annotations

from typing import Any, TypeVar

from ._conversation_blocks import (
    AudioBlock,
    ContentBlock,
    ConversationError,
    EmbeddedResource,
    ImageBlock,
    OtherBlock,
    ResourceContents,
    ResourceLink,
    TextBlock,
    block_from_json,
    block_text,
    block_to_json,
    blocks_from_json,
    blocks_text,
)
from ._conversation_codec import (
    encode_message,
    message_from_json,
    message_to_json,
    messages_from_json,
    messages_to_json,
    tool_call_from_json,
)
from ._conversation_model import (
    AssistantMessage,
    Compaction,
    CompactionSummary,
    GuardFinding,
    GuardRecord,
    JsonObject,
    Location,
    Message,
    RedactedThinking,
    SystemMessage,
    ThinkingBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    for_model,
    nothing_said,
)

__all__ = [
    "AssistantMessage",
    "AudioBlock",
    "Compaction",
    "CompactionSummary",
    "ContentBlock",
    "ConversationError",
    "EmbeddedResource",
    "GuardFinding",
    "GuardRecord",
    "ImageBlock",
    "JsonObject",
    "Location",
    "Message",
    "OtherBlock",
    "RedactedThinking",
    "ResourceContents",
    "ResourceLink",
    "SystemMessage",
    "TextBlock",
    "ThinkingBlock",
    "ToolCall",
    "ToolResultMessage",
    "UserMessage",
    "block_from_json",
    "block_text",
    "block_to_json",
    "blocks_from_json",
    "blocks_text",
    "encode_message",
    "for_model",
    "message_from_json",
    "message_to_json",
    "messages_from_json",
    "messages_to_json",
    "nothing_said",
    "replace",
    "tool_call_from_json",
]


T = TypeVar("T")


def replace(value: T, **changes: Any) -> T:
    """A copy of a message or block with ``changes`` (all of them are frozen)."""
    return value.__replace__(**changes)  # type: ignore[attr-defined,no-any-return]
