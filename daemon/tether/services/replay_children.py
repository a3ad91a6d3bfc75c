"""Sub-agents on a v2 `session/resume`: the children a replay shows, and those running now.

Owns: reading a session's children and their transcripts for its v2 replay (SPEC §12.9),
and telling a window that joins while a child runs its state (`subagent_update`).
Must not: render a message (`rendering/replay_v2.py` does) or run or stop a child.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..agent.sink import SubagentChanged, TurnStateChanged
from ..rendering.acp_v2 import subagent_update
from ..rendering.emitter import frame
from ..rendering.replay_v2 import ChildShown, ReplayV2
from ..store.children import child_sessions

if TYPE_CHECKING:
    from ..store import HistoryStore
    from .live_session import LiveSession
    from .ports import UpdateChannel


async def children_shown(store: HistoryStore, session_id: str, workspace: str | None) -> dict[str, ChildShown]:
    """Each child of the session with its own replay, by its `delegate` call's id."""
    shown: dict[str, ChildShown] = {}
    for call_id, child in (await child_sessions(store, session_id)).items():
        messages = await store.load_messages(child.session_id)
        replay = ReplayV2(child.session_id, workspace=workspace)
        stored = [(m.json_body(), m.status, m.turn_id, m.seq) for m in messages]
        shown[call_id] = ChildShown(child, [replay.frame(u) for u in replay.updates(stored)])
    return shown


async def say_running_children(ctx: UpdateChannel, session: LiveSession) -> None:
    """To this window only: each child running under the session's turn now, with its state
    (its updates reach the window from then on: it is in the parent's audience)."""
    turn = session.turn
    for child in list(turn.children) if turn is not None else ():
        waiting = await session.store.waiting_turn(child.child_session_id)
        state = TurnStateChanged("requires_action" if waiting is not None else "running")
        shown = SubagentChanged(child.child_session_id, child.parent_call_id, cancellable=True, state=state)
        ctx.connection.send_body(frame(session.id, subagent_update(shown)))
