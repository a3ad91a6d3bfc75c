"""A stock LSP client's turn, shown live to the shared daemon's windows that have its session open.

Owns: `watched`, the LSP turn's sink (`server/lsp_agent/watch.py`) teed with the ACP updates of
the session's audience (the LSP connection itself never joins it), and `Tee`, the `TurnSink` that
forwards each call to both. Must not: send the LSP client anything but its own progress view,
or decide anything about the turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..rendering import SessionUpdates

if TYPE_CHECKING:
    from ..agent.sink import TurnEvent, TurnSink
    from ..services.live_session import Audiences
    from ..transport.connection import Connection


class Tee:
    """One turn's events to two sinks, in the order they come."""

    __slots__ = ("_first", "_second")

    def __init__(self, first: TurnSink, second: TurnSink) -> None:
        self._first = first
        self._second = second

    def text(self, delta: str) -> None:
        self._first.text(delta)
        self._second.text(delta)

    def thought(self, delta: str) -> None:
        self._first.thought(delta)
        self._second.thought(delta)

    def emit(self, event: TurnEvent) -> None:
        self._first.emit(event)
        self._second.emit(event)

    def flush(self) -> None:
        self._first.flush()
        self._second.flush()


def watched(conn: Connection | None, session_id: str, sink: TurnSink) -> tuple[TurnSink, SessionUpdates | None]:
    """(the sink the turn writes to, the windows' emitter or None when no window watches).
    The windows' emitter writes to the first of them and, through the audience, to the rest;
    a window that loads the session during the turn is in the audience from then on."""
    audience: Audiences | None = getattr(conn, "audience", None)
    seen = audience.get(session_id) if audience else None
    if not seen:
        return sink, None
    updates = SessionUpdates(session_id, seen[0])
    return Tee(sink, updates), updates
