"""The conversation as typed values: content blocks, messages, tool calls and results.

Owns: the one model the daemon passes from the wire to the store (msgspec Structs encoded as the
stored JSON: ``message_from_json``/``message_to_json``/``encode_message``; the stored shapes in
docs/decisions/0017), ``replace``, ``ConversationError`` and the one text rendering of blocks.
Must not: do I/O or know a provider's API shape or a wire version's (the server renders those).
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
