"""The sub-agent sessions a session's `delegate` calls made (their metadata names the parent).

Owns: the one read that finds a session's children, with the call each ran under and how
its last turn ended. Must not: read their messages (``HistoryStore`` does) or format
anything for the wire.
"""

from __future__ import annotations

from dataclasses import dataclass

from tether.store.history import HistoryStore
from tether.store.records import FINAL_TURN_STATUSES

# children by their parent's id; their last turn's status and stop reason
_CHILDREN = (
    "SELECT s.id, s.title, json_extract(s.metadata, '$.parentCallId'), t.status, t.stop_reason "
    "FROM sessions AS s LEFT JOIN turns AS t ON t.id = "
    "(SELECT l.id FROM turns AS l WHERE l.session_id = s.id ORDER BY l.seq DESC LIMIT 1) "
    "WHERE json_extract(s.metadata, '$.parentSessionId') = ? ORDER BY s.created_at, s.id"
)


@dataclass(frozen=True, slots=True)
class ChildRecord:
    """A sub-agent's session as its parent's replay shows it."""

    session_id: str
    title: str | None
    parent_call_id: str
    stop_reason: str | None  # None: its turn has not ended (it runs)


async def child_sessions(store: HistoryStore, parent_id: str) -> dict[str, ChildRecord]:
    """The children of session `parent_id`, by the `delegate` call each ran under. A turn
    whose daemon died (`interrupted`: no stop reason stored) stopped before its end: `cancelled`."""
    rows = await store.query(_CHILDREN, (parent_id,))
    return {
        str(call): ChildRecord(str(id_), title, str(call), stop or ("cancelled" if status in FINAL_TURN_STATUSES else None))
        for id_, title, call, status, stop in rows if call
    }
