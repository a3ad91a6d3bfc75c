"""Sub-agents as sessions of their own on ACP v2 (SPEC §12.6).

Owns: `ChildView` (a child's updates on its own id, its states mirrored on the parent as
`subagent_update.state`, its approvals' `requires_action`) and finding a running child by id
(`cancel_child`, its calls' cancel, a prompt or state of its session while it runs).
Must not: run the child, or nest it under the call (v1: `ChildSink`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from tether_protocol import SessionBusy

from ..agent.sink import SubagentChanged, TurnEvent, TurnSink, TurnStateChanged
from ..rendering import SessionUpdates

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..agent.session import ActiveTurn
    from ..transport.connection import Connection
    from .live_session import LiveSession
    from .ports import AskingHost


class _ParentV2Viewers:
    """The v2 connections that see the parent session now (a window may join mid-turn)."""

    __slots__ = ("_ctx", "_parent_id")

    def __init__(self, ctx: AskingHost, parent_id: str) -> None:
        self._ctx, self._parent_id = ctx, parent_id

    def get(self, session_id: str, default: Sequence[Connection] = (), /) -> Sequence[Connection]:
        parent = self._ctx.daemon.registry.live.get(self._parent_id)
        seen = parent.audience if parent is not None and parent.audience else [self._ctx.connection]
        return [conn for conn in seen if getattr(conn, "protocol_version", 1) == 2] or default


class ChildView:
    """A child session's own sink: its updates on its id; its states also on the parent."""

    __slots__ = ("updates", "parent", "child_id", "call_id", "waiting", "_asking")

    def __init__(
        self,
        updates: SessionUpdates,
        parent: TurnSink,
        call_id: str,
        asking: dict[str, TurnSink],
    ) -> None:
        self.updates, self.parent, self.call_id, self._asking = updates, parent, call_id, asking
        self.child_id = updates.session_id
        self.waiting = False  # its state is `requires_action` (an approval of its own waits)

    def text(self, delta: str) -> None:
        self.updates.text(delta)

    def thought(self, delta: str) -> None:
        self.updates.thought(delta)

    def emit(self, event: TurnEvent) -> None:
        self.updates.emit(event)
        if type(event) is TurnStateChanged:
            self.parent.emit(SubagentChanged(self.child_id, self.call_id, state=event))
            self._parent_waits(event.state == "requires_action")
            if event.state == "idle":
                self._asking.pop(self.child_id, None)

    def _parent_waits(self, waiting: bool) -> None:
        """The parent's work waits on its children's approvals: `requires_action` while one
        of them waits, `running` once none does (SPEC §12.6)."""
        if waiting == self.waiting:
            return
        self.waiting = waiting
        others = any(
            sink.waiting
            for sink in self._asking.values()
            if isinstance(sink, ChildView) and sink is not self and sink.parent is self.parent
        )
        if not others:
            self.parent.emit(TurnStateChanged("requires_action" if waiting else "running"))

    def flush(self) -> None:
        self.updates.flush()


def child_view(
    ctx: AskingHost,
    parent: TurnSink,
    parent_id: str,
    child_id: str,
    call_id: str,
    *,
    joining: object = None,
    past: Sequence[TurnEvent] = (),
) -> TurnSink | None:
    """Show the child as a session of its own, when a v2 connection sees the parent, or
    (`joining`) a v2 window joins it mid-child, its renderer told the `past` events its ids
    need (none: v1 alone, the child stays nested under its call)."""
    viewers = _ParentV2Viewers(ctx, parent_id)
    first = viewers.get(child_id) or ([cast("Connection", joining)] if joining is not None else [])
    if not first:
        return None
    updates = SessionUpdates(child_id, first[0], audience=viewers)
    updates.joined(past)
    asking = ctx.daemon.registry.live[
        parent_id
    ].turn_sinks  # (live: it has viewers) its approvals say `requires_action` on its own id
    shown = asking[child_id] = ChildView(updates, parent, call_id, asking)
    return shown


def running_child(ctx: AskingHost, session_id: str) -> tuple[LiveSession, ActiveTurn] | None:
    """The live parent and the turn of a sub-agent session running now (None: none is)."""
    for parent in ctx.daemon.registry.live.values():
        turn = parent.turn
        child = next((c for c in turn.children if c.child_session_id == session_id), None) if turn else None
        if child is not None:
            return parent, child
    return None


def refuse_running_child(ctx: AskingHost, session_id: str) -> None:
    """A sub-agent's session runs its turn under its parent's `delegate` call: a prompt of
    its own would run a second turn in it beside that one (refused, as a busy session's)."""
    found = running_child(ctx, session_id)
    if found is not None:
        parent, child = found
        raise SessionBusy(
            f"session {session_id!r} is a sub-agent running under call {child.parent_call_id!r} of session "
            f"{parent.id!r}; wait for its state_update idle, or stop it with session/cancel"
        )


def cancel_child(ctx: AskingHost, session_id: str) -> bool:
    """`session/cancel` of a running sub-agent's session (v2 advertises `cancel` on it): only
    its turn stops, as `tool_call/cancel` of its `delegate` call stops it; the parent goes on."""
    found = running_child(ctx, session_id)
    if found is None:
        return False
    parent, child = found
    if parent.calls.cancel(child.parent_call_id) is not None:  # not (or no longer) its call's
        child.cancel()
    return True
