"""Sub-agents on a v2 `session/resume`'s replay: the children it shows.

Owns: reading a session's children and their transcripts for its v2 replay (SPEC §12.9).
Must not: render a message (`rendering/replay_v2.py` does), run or stop a child, or tell a
joining window what runs now (`joining_v2.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..rendering.replay_v2 import ChildShown, ReplayV2
from ..store.children import child_sessions

if TYPE_CHECKING:
    from ..store import HistoryStore


async def children_shown(store: HistoryStore, session_id: str, workspace: str | None) -> dict[str, ChildShown]:
    """Each child of the session with its own replay, by its `delegate` call's id."""
    shown: dict[str, ChildShown] = {}
    for call_id, child in (await child_sessions(store, session_id)).items():
        messages = await store.load_messages(child.session_id)
        replay = ReplayV2(child.session_id, workspace=workspace)
        stored = [(m.json_body(), m.status, m.turn_id, m.seq) for m in messages]
        shown[call_id] = ChildShown(child, [replay.frame(u) for u in replay.updates(stored)])
    return shown
