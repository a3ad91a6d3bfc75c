"""The stored JSON of a turn's typed values: the one place they become text and back.

Owns: the text of the checkpoint of calls waiting for approval (``PendingApprovals``, byte for byte
what earlier Tethers wrote; one that cannot be read back is a ``StorageFault`` naming the turn),
of the run report and of the streamed partial (through the protocol's converters).
Must not: touch the database, or import the protocol's classes at module level (start path).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.store.errors import StorageFault
from tether.store.records import decode_json, encode_json

if TYPE_CHECKING:
    from pathlib import Path

    from tether_protocol import PendingApprovals, RunReport
    from tether_protocol.conversation import AssistantMessage

__all__ = ["partial_text", "pending_of", "pending_text", "report_text"]


def report_text(report: RunReport) -> str:
    """A run report as stored: its wire JSON (camelCase), read back and sent as it is."""
    from tether_protocol import unstructure

    return encode_json(unstructure(report))


def partial_text(partial: AssistantMessage | None) -> str | None:
    """The streamed output of the step in flight as stored: a message body."""
    if partial is None:
        return None
    from tether_protocol.conversation import message_to_json

    return encode_json(message_to_json(partial))


def pending_text(pending: PendingApprovals | None) -> str | None:
    """A checkpoint as stored (``{"step", "calls": [{"id", "name", "arguments", "started"?}]}``)."""
    return None if pending is None else encode_json(pending.to_json())


def pending_of(path: Path, session_id: str, turn_id: str, text: str) -> PendingApprovals:
    """A stored checkpoint read back (written by any Tether since restart-safe approvals);
    one that cannot be read is a ``StorageFault`` (the history was changed outside Tether)
    that names the turn, the field and what to do."""
    from tether_protocol import PendingApprovals

    try:
        return PendingApprovals.from_json(decode_json(text))
    except ValueError as exc:  # not JSON, or a CheckpointError naming the field
        raise StorageFault(
            f"turn {turn_id} of session {session_id} waits for approval of calls that cannot be read from "
            f"{path} (pending{exc}): the history was changed outside Tether or by a newer version; restore "
            f"a backup of it, or delete the session (tether sessions delete {session_id})",
            path,
        ) from exc
