"""How full the model's context is: the provider's count, plus an estimate for what came after.

Owns: seed 004's hybrid estimate (the last reported input count, plus 4 characters a token
for messages since), used to decide when to prune and compact.
Must not: do work proportional to the whole history (only the new messages are estimated; those
the journal stores are counted from their stored size, without encoding them again).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a live session is opened before the conversation model is imported
    from collections.abc import Sequence

    from tether_protocol.conversation import Message

CHARS_PER_TOKEN = 4


def estimate_message(message: Message) -> int:
    """About 4 characters a token of the message's stored JSON (what the model reads of it)."""
    from tether_protocol.conversation import encode_message, for_model

    return max(1, len(encode_message(for_model(message)).decode()) // CHARS_PER_TOKEN)


@dataclass(slots=True)
class ContextEstimate:
    anchor_tokens: int = 0  # the provider's last reported input + output tokens
    anchor_count: int = -1  # how many history messages that count covered (-1: no anchor)
    estimated_tail: int = 0  # estimate for messages after the anchor, added incrementally
    tail_counted_to: int = 0

    def anchor(self, input_tokens: int, output_tokens: int, message_count: int) -> None:
        """A step reported its usage; `message_count` messages (its reply included) are covered."""
        if input_tokens <= 0:
            return
        self.anchor_tokens = input_tokens + output_tokens
        self.anchor_count = message_count
        self.estimated_tail = 0
        self.tail_counted_to = message_count

    def stored(self, start: int, messages: Sequence[Message], sizes: Sequence[int]) -> None:
        """``messages`` were stored (``sizes``: their stored bodies' lengths) and are the view's
        from index ``start`` on: counted now, O(1) each, if the estimate had counted up to
        ``start`` (else `used` estimates them). A tool result's blocks are shown to the user,
        not read by the model: such a message is estimated from what the model reads."""
        if self.anchor_count < 0 or self.tail_counted_to != start or 0 in sizes:  # 0: not encoded by the store
            return
        for message, size in zip(messages, sizes, strict=True):
            shown = message.role == "tool" and bool(getattr(message, "blocks", None))
            self.estimated_tail += estimate_message(message) if shown else max(1, size // CHARS_PER_TOKEN)
        self.tail_counted_to = start + len(sizes)

    def used(self, messages: Sequence[Message], base_chars: int = 0) -> int:
        """Tokens the next call would send: anchor + estimate of the messages after it."""
        if self.anchor_count < 0:
            # No provider count yet (a revived session): estimate everything once.
            self.anchor_tokens = base_chars // CHARS_PER_TOKEN + sum(map(estimate_message, messages))
            self.anchor_count = len(messages)
            self.tail_counted_to = len(messages)
            self.estimated_tail = 0
        for message in messages[self.tail_counted_to :]:
            self.estimated_tail += estimate_message(message)
        self.tail_counted_to = max(self.tail_counted_to, len(messages))
        return self.anchor_tokens + self.estimated_tail
