"""The sub-agent sessions a session's `delegate` calls made (their metadata names the parent).

Owns: the one read that finds a session's children, with the call each ran under and how
its last turn ended. Must not: read their messages (``HistoryStore`` does) or format
anything for the wire.
"""

from __future__ import annotations

from dataclasses import dataclass

from tether.store.history import HistoryStore

# children by their parent's id; the last turn's stop reason (NULL while it runs)
_CHILDREN = (
    "SELECT s.id, s.title, json_extract(s.metadata, '$.parentCallId'), "
    "(SELECT t.stop_reason FROM turns AS t WHERE t.session_id = s.id ORDER BY t.seq DESC LIMIT 1) "
    "FROM sessions AS s WHERE json_extract(s.metadata, '$.parentSessionId') = ? ORDER BY s.created_at, s.id"
)


@dataclass(frozen=True, slots=True)
class ChildRecord:
    """A sub-agent's session as its parent's replay shows it."""

    session_id: str
    title: str | None
    parent_call_id: str
    stop_reason: str | None  # None: its turn has not ended (it runs, or its process stopped)


async def child_sessions(store: HistoryStore, parent_id: str) -> dict[str, ChildRecord]:
    """The children of session `parent_id`, by the `delegate` call each ran under."""
    rows = await store.query(_CHILDREN, (parent_id,))
    return {str(call): ChildRecord(str(id_), title, str(call), stop) for id_, title, call, stop in rows if call}
