"""The conversation's typed values (see ``tether_protocol.conversation``, the public API).

Owns: the attrs classes of content blocks and messages, ``nothing_said``, ``for_model``
(what the model reads of a message) and the one text rendering of content blocks
(``block_text``/``blocks_text``).
Must not: convert to or from JSON (``_conversation_json`` does), do I/O, or know a
provider's or a wire version's shape.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeAlias

import attrs

from ._json import JsonObject as JsonObject  # the edge: tool arguments, opaque extras


class ConversationError(ValueError):
    """A stored message (or block) that is not one the model can hold; names the field."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path} {reason}")
        self.path = path
        self.reason = reason


def _empty() -> JsonObject:
    return {}


# -- content blocks -----------------------------------------------------------------


@attrs.frozen
class TextBlock:
    text: str
    extra: JsonObject = attrs.field(factory=_empty)


@attrs.frozen
class ImageBlock:
    data: str | None = None  # base64
    mime_type: str | None = None
    uri: str | None = None
    extra: JsonObject = attrs.field(factory=_empty)


@attrs.frozen
class AudioBlock:
    data: str | None = None  # base64
    mime_type: str | None = None
    extra: JsonObject = attrs.field(factory=_empty)


@attrs.frozen
class ResourceLink:
    uri: str
    name: str | None = None
    mime_type: str | None = None
    extra: JsonObject = attrs.field(factory=_empty)  # title, description, size, icons...


@attrs.frozen
class ResourceContents:
    uri: str
    text: str | None = None  # a text resource; else `blob` (base64) or nothing
    blob: str | None = None
    mime_type: str | None = None
    extra: JsonObject = attrs.field(factory=_empty)


@attrs.frozen
class EmbeddedResource:
    resource: ResourceContents
    extra: JsonObject = attrs.field(factory=_empty)


@attrs.frozen
class OtherBlock:
    """A block of a type this model does not know, kept whole (its ``type`` included)."""

    type: str
    fields: JsonObject


ContentBlock: TypeAlias = TextBlock | ImageBlock | AudioBlock | ResourceLink | EmbeddedResource | OtherBlock


# -- messages ----------------------------------------------------------------------


@attrs.frozen
class GuardFinding:
    pattern: str
    excerpt: str


@attrs.frozen
class GuardRecord:
    """What the input guard found in a prompt (stored with it; ``blocked``: never sent)."""

    findings: tuple[GuardFinding, ...] = ()
    blocked: bool = False


@attrs.frozen
class UserMessage:
    content: tuple[ContentBlock, ...]
    guard: GuardRecord | None = None
    role: str = attrs.field(default="user", init=False)


@attrs.frozen
class CompactionSummary:
    """The model-written summary that stands for the ``replaced`` messages before it; the
    ``kept`` messages stored just before it stay in the model's view (None: stored before
    that was recorded, none). A user-role message to every provider."""

    content: tuple[ContentBlock, ...]
    replaced: int = 0
    kept: int | None = None
    role: str = attrs.field(default="user", init=False)


@attrs.frozen
class ToolCall:
    id: str
    name: str
    arguments: JsonObject = attrs.field(factory=_empty)
    raw_arguments: str | None = None  # what the model wrote, when it was not valid JSON


@attrs.frozen
class ThinkingBlock:
    """Anthropic: a thinking block closed by its signature (sent back verbatim)."""

    thinking: str
    signature: str | None = None


@attrs.frozen
class RedactedThinking:
    data: str


@attrs.frozen
class AssistantMessage:
    text: str = ""
    thinking: str | None = None
    thinking_signature: str | None = None
    thinking_blocks: tuple[ThinkingBlock | RedactedThinking, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    role: str = attrs.field(default="assistant", init=False)


@attrs.frozen
class Location:
    path: str
    line: int | None = None


@attrs.frozen
class ToolResultMessage:
    tool_call_id: str
    name: str
    content: str = ""
    is_error: bool = False
    title: str | None = None
    kind: str | None = None
    locations: tuple[Location, ...] = ()
    ledger: Any = None  # the tools' own record of what the model read (opaque JSON)
    # A content stored as JSON other than a string (an imported snapshot's): kept as it
    # is; `content` is then its JSON text, what the model reads.
    structured: Any = None
    # What the client was shown besides the text (an MCP tool's images, audio, resources,
    # links), shown again by a replay; the model reads only `content`.
    blocks: tuple[ContentBlock, ...] = ()
    role: str = attrs.field(default="tool", init=False)


@attrs.frozen
class SystemMessage:
    content: str
    role: str = attrs.field(default="system", init=False)


Message: TypeAlias = UserMessage | CompactionSummary | AssistantMessage | ToolResultMessage | SystemMessage


def nothing_said(message: Message) -> bool:
    """An assistant message with nothing to show or send (a turn interrupted before any
    of its answer was saved)."""
    return type(message) is AssistantMessage and not (message.text or message.thinking or message.tool_calls)


def for_model(message: Message) -> Message:
    """The message as the model reads it: a tool result without the blocks only the
    client is shown (what a size estimate or a reviewer should count)."""
    if type(message) is ToolResultMessage and message.blocks:
        return attrs.evolve(message, blocks=())
    return message


# -- rendering blocks as text --------------------------------------------------------


def _fence(text: str) -> str:
    """A code fence longer than any backtick run in ``text`` (it cannot close it early)."""
    longest, run = 0, 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def block_text(block: ContentBlock) -> str:
    """One block as the text a model reads: links and attached files readable, what a
    text-only model cannot take (images, audio, unknown blocks) named, not dropped."""
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ResourceLink):
        return f"[file: {block.name or block.uri}]({block.uri})"
    if isinstance(block, EmbeddedResource):
        resource = block.resource
        text = resource.text
        if text is None:
            return f"[file: {resource.uri}] (binary content omitted)"
        fence = _fence(text)
        return f"[file: {resource.uri}]\n{fence}\n{text}{'' if text.endswith(chr(10)) else chr(10)}{fence}"
    if isinstance(block, ImageBlock):
        return "[image content omitted]"
    if isinstance(block, AudioBlock):
        return "[audio content omitted]"
    return f"[{block.type or 'unknown'} content omitted]"


def blocks_text(blocks: Iterable[ContentBlock]) -> str:
    """The blocks as one text, one block per line (``block_text``)."""
    return "\n".join(map(block_text, blocks))
