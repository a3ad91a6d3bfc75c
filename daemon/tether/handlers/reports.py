"""`_tether/session/report` (extension): the run reports of a session's turns.

Owns: the handler: a live session's stored reports, or one turn's (not found names the turn).
Must not: build reports (the agent does, the store keeps them).
"""

from __future__ import annotations

from tether_protocol import (
    JsonObject,
    ReportParams,  # not `_messages`: every area's classes
    SessionNotFound,
)

from ..server.context import ClientConnection


async def session_report(ctx: ClientConnection, params: ReportParams) -> JsonObject:
    session = ctx.daemon.registry.get_live(params.session_id)
    if params.turn_id is not None:
        found = await session.store.get_report(params.turn_id)
        if found is None or found.get("sessionId") != session.id:
            raise SessionNotFound(f"no run report for turn {params.turn_id!r} in session {session.id!r}")
        return {"reports": [found]}
    return {"reports": await session.store.list_reports(session.id)}
