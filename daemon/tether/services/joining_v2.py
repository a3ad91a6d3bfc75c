"""What a v2 window that joins a live session (`session/resume`) is told of the work running there.

Owns: telling that window alone, after the session's `state_update`, each running sub-agent
(`subagent_update` with its state) and each running command's terminal (`terminal_update` as
it is now), so the updates it gets from then on have what they refer to (SPEC §12.6, §12.9).
Must not: send the live updates (the session's sinks do) or run or stop anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..agent.sink import SubagentChanged, TurnStateChanged
from ..rendering.acp_v2 import AcpV2, subagent_update
from ..rendering.emitter import frame

if TYPE_CHECKING:
    from .live_session import LiveSession
    from .ports import UpdateChannel


async def say_running_children(ctx: UpdateChannel, session: LiveSession) -> None:
    """Each child running under the session's turn now, with its state (its updates reach the
    window from then on: it is in the parent's audience; a child shown nested alone so far, to
    v1 windows, is shown as its own session from now on)."""
    turn = session.turn
    for child in list(turn.children) if turn is not None else ():
        waiting = await session.store.waiting_turn(child.child_session_id)
        if child.show_alone is not None:
            child.show_alone(ctx.connection)
        state = TurnStateChanged("requires_action" if waiting is not None else "running")
        shown = SubagentChanged(child.child_session_id, child.parent_call_id, cancellable=True, state=state)
        ctx.connection.send_body(frame(session.id, subagent_update(shown)))


def say_running_terminals(ctx: UpdateChannel, session: LiveSession) -> None:
    """Each command running now, its terminal as it started (command, directory, cancel), on
    the session it runs in (a sub-agent's: the child's id): its output chunks follow."""
    for handle, terminal in session.calls.terminals():
        shown_on = handle.child_session_id or session.id
        update = AcpV2(shown_on).event(terminal)
        if update is not None:
            ctx.connection.send_body(frame(shown_on, update))
