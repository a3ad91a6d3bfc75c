"""The conversation's messages as frozen msgspec Structs whose encoding is the stored JSON.

Owns: the message classes (their fields are the stored keys; which defaults are written:
docs/decisions/0017), ``nothing_said`` and ``for_model`` (what the model reads of a message).
Must not: decode or encode (``_conversation_codec`` does), do I/O, or know a provider's or
a wire version's shape.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from msgspec import Struct, field

from ._conversation_blocks import ContentBlock, _Blocks
from ._json import JsonObject as JsonObject  # the edge: tool arguments, opaque extras

if TYPE_CHECKING:
    ContentBlocks: TypeAlias = tuple[ContentBlock, ...]
else:
    ContentBlocks = _Blocks  # msgspec hands a stored list to `blocks_from_json`


def _empty_object() -> JsonObject:
    return {}  # a factory msgspec does not know: `arguments` is written even when empty


class _Stored(Struct, frozen=True, omit_defaults=True, gc=False):
    """A stored value: snake_case keys as stored, None-defaulted fields left out."""


class GuardFinding(_Stored, frozen=True):
    pattern: str
    excerpt: str


class GuardRecord(_Stored, frozen=True):
    """What the input guard found in a prompt (stored with it; ``blocked``: never sent)."""

    findings: tuple[GuardFinding, ...] = field(default_factory=tuple)
    blocked: bool = field(default_factory=bool)


class UserMessage(_Stored, frozen=True, tag_field="role", tag="user"):
    content: ContentBlocks
    guard: GuardRecord | None = None
    role: ClassVar[str] = "user"


class Compaction(_Stored, frozen=True):
    replaced: int = field(default_factory=int)
    kept: int | None = None


class CompactionSummary(_Stored, frozen=True, tag_field="role", tag="user"):
    """The model-written summary that stands for the ``compaction.replaced`` messages before
    it; the ``kept`` messages stored just before it stay in the model's view (None: stored
    before that was recorded, none). A user-role message to every provider."""

    content: ContentBlocks
    compaction: Compaction = field(default_factory=Compaction)
    role: ClassVar[str] = "user"

    @property
    def replaced(self) -> int:
        return self.compaction.replaced

    @property
    def kept(self) -> int | None:
        return self.compaction.kept


class ToolCall(_Stored, frozen=True):
    id: str
    name: str
    arguments: JsonObject = field(default_factory=_empty_object)
    raw_arguments: str | None = None  # what the model wrote, when it was not valid JSON


class ThinkingBlock(_Stored, frozen=True, tag_field="type", tag="thinking"):
    """Anthropic: a thinking block closed by its signature (sent back verbatim)."""

    thinking: str = field(default_factory=str)
    signature: str | None = None


class RedactedThinking(_Stored, frozen=True, tag_field="type", tag="redacted_thinking"):
    data: str


class AssistantMessage(_Stored, frozen=True, tag_field="role", tag="assistant"):
    text: str = field(default_factory=str)
    thinking: str | None = None
    thinking_signature: str | None = None
    thinking_blocks: tuple[ThinkingBlock | RedactedThinking, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    role: ClassVar[str] = "assistant"


class Location(_Stored, frozen=True):
    path: str
    line: int | None = None


class ToolResultMessage(_Stored, frozen=True, tag_field="role", tag="tool"):
    tool_call_id: str
    name: str
    content: str = field(default_factory=str)
    is_error: bool = field(default_factory=bool)
    title: str | None = None
    kind: str | None = None
    locations: tuple[Location, ...] = ()
    ledger: Any = None  # the tools' own record of what the model read (opaque JSON)
    # A content stored as JSON other than a string (an imported snapshot's): kept as it
    # is (stored back as `content`); `content` is then its JSON text, what the model reads.
    structured: Any = None
    # What the client was shown besides the text (an MCP tool's images, audio, resources,
    # links), shown again by a replay; the model reads only `content`.
    blocks: ContentBlocks = ()
    role: ClassVar[str] = "tool"


class SystemMessage(_Stored, frozen=True, tag_field="role", tag="system"):
    content: str
    role: ClassVar[str] = "system"


Message: TypeAlias = UserMessage | CompactionSummary | AssistantMessage | ToolResultMessage | SystemMessage


def nothing_said(message: Message) -> bool:
    """An assistant message with nothing to show or send (a turn interrupted before any
    of its answer was saved)."""
    return type(message) is AssistantMessage and not (message.text or message.thinking or message.tool_calls)


def for_model(message: Message) -> Message:
    """The message as the model reads it: a tool result without the blocks only the
    client is shown (what a size estimate or a reviewer should count)."""
    if type(message) is ToolResultMessage and message.blocks:
        return message.__replace__(blocks=())
    return message
