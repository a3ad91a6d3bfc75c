"""The role and status words of stored turns and messages (a snapshot's and the history's).

Owns: ``TurnStatus``, ``MessageRole``, ``StoredMessageStatus``: the one list of each, read by
the snapshot's Structs and by the store's records; ``COMMAND_FOOTER``, how a stored command
result's last line says it ended. Must not: import anything but ``typing`` and ``re`` (the store
reads it on the start path).
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["COMMAND_FOOTER", "MessageRole", "StoredMessageStatus", "TurnStatus"]

TurnStatus = Literal["running", "complete", "cancelled", "interrupted", "error"]
MessageRole = Literal["user", "assistant", "tool", "system"]
# "incomplete": shown to the client, then the stream broke; kept, but not sent to the model
StoredMessageStatus = Literal["complete", "incomplete", "cancelled", "interrupted", "error"]
# A `run_command` result's footer (tools/run_command.py writes it): its exit code or signal,
# read back by the v2 replay's terminals and by a restore's checks
COMMAND_FOOTER = re.compile(r"^(?:exit code (-?\d+)|killed by (\S+)|killed after timeout \(\d+ s\)) · [^\n]*$", re.M)
