"""The role and status words of stored turns and messages (a snapshot's and the history's).

Owns: ``TurnStatus``, ``MessageRole``, ``StoredMessageStatus``: the one list of each, read by
the snapshot's Structs and by the store's records. Must not: import anything but ``typing``
(the store reads it on the start path).
"""

from __future__ import annotations

from typing import Literal

__all__ = ["MessageRole", "StoredMessageStatus", "TurnStatus"]

TurnStatus = Literal["running", "complete", "cancelled", "interrupted", "error"]
MessageRole = Literal["user", "assistant", "tool", "system"]
# "incomplete": shown to the client, then the stream broke; kept, but not sent to the model
StoredMessageStatus = Literal["complete", "incomplete", "cancelled", "interrupted", "error"]
