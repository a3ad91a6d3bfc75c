"""`session/resume` on an ACP v2 connection, with its replay; v2's refusal of `session/load`.

Owns: reading v2's `ResumeSessionRequest`, the replay `replayFrom` asks for, `replay_complete`,
the current `state_update` and v2's answer, in that order (SPEC §12.9).
Must not: make a session live another way than v1 (`loading.py`) or render a turn's updates.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether_protocol import InvalidParams, MethodNotFound, collector_paused, dumps_text, unstructure
from tether_protocol.peer import RawResult

from ..rendering import SessionUpdates
from ..rendering.acp_v2 import state_snapshot
from ..rendering.acp_v2_answers import config_options_v2
from ..rendering.emitter import frame
from ..rendering.replay_v2 import REPLAY_COMPLETE, ChildShown, ReplayV2
from ..services.child_sessions import running_child
from ..services.config_options import config_options
from ..services.joining_v2 import say_running_children, say_running_terminals
from ..services.mcp_servers import check_acp_servers, keep_acp_servers, start_in_background
from ..services.registry import check_workspace
from ..services.replay_children import child_pages, children_shown, marked_child
from .loading import (
    SendFrames,
    load_running,
    open_stored,
    pending_ids,
    replay_pages,
    send_in_batches,
    turn_pages_of,
)
from .sessions import commands_after_answer

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..server.context import ClientConnection
    from ..services.live_session import LiveSession
    from ..services.sessions_service import StoredSession
    from ..store import HistoryStore, MessageRecord, MessageView
    from ..transport.connection import Connection

# What a v2 client is told of a turn left waiting for approval (v1's says `session/load`)
_WAITING = (
    "a turn of this session was left waiting for approval when a Tether process stopped: "
    'session/resume with replayFrom {"type": "start"} shows it and asks again; session/cancel drops it'
)


async def session_load_v2(ctx: ClientConnection, params: object) -> None:
    """v2 removed `session/load`: its replay is `session/resume`'s `replayFrom`."""
    raise MethodNotFound(
        'method not found: session/load is not part of ACP v2; use session/resume with replayFrom {"type": "start"} '
        "to replay a stored session"
    )


async def session_resume_v2(ctx: ClientConnection, raw: Any) -> RawResult:
    from tether_protocol.acp_v2 import convert
    from tether_protocol.acp_v2 import schema_types as v2

    params = convert({} if raw is None else raw, v2.ResumeSessionRequest, method="session/resume")
    replay = _wants_replay(params.replay_from)
    for name, value in (
        ("additionalDirectories", params.additional_directories),
        ("systemPrompt", params.system_prompt),
    ):
        if value:  # what Tether does not advertise (capabilities.session): refused, not ignored
            raise InvalidParams(
                f"invalid params for session/resume: {name} is not supported (Tether does not advertise "
                f"capabilities.session.{name}); leave it out"
            )
    with collector_paused():  # the history read and its replay: many objects, none in a cycle
        workspace = check_workspace(params.cwd)
        servers = check_acp_servers("session/resume", list(raw.get("mcpServers") or []))
        session, state = await (_replayed if replay else _resumed)(ctx, params.session_id, workspace)
        if state == "idle" and running_child(ctx, session.id) is not None:
            state = "running"  # a sub-agent's session: its turn runs under its parent's call
        keep_acp_servers(ctx, "session/resume", session.id, workspace, servers)
        start_in_background(ctx, session.id)
        # the current state, to this client only: after any replay, before the answer
        ctx.connection.send_body(frame(session.id, state_snapshot(state)))
        await say_running_children(ctx, session)
        say_running_terminals(ctx, session)
        commands_after_answer(ctx, session.id, workspace)
        options = config_options_v2(unstructure(config_options(ctx, session)) or [])
        return RawResult(dumps_text({"configOptions": options}))


def _wants_replay(cursor: Any) -> bool:
    """Whether `replayFrom` asks for a replay: `{type: "start"}`, or none (omitted, null)."""
    from tether_protocol.acp_v2 import schema_types as v2

    if cursor is None or not isinstance(cursor, v2.ReplayFrom):  # omitted (UNSET) or null
        return False
    if isinstance(cursor.value, v2.ReplayFrom_start):
        return True
    raise InvalidParams(
        f"invalid params for session/resume: replayFrom.type {cursor.tag!r} is not supported; "
        'the one replay cursor Tether supports is {"type": "start"} (or leave replayFrom out: no replay)'
    )


async def _replayed(ctx: ClientConnection, session_id: str, workspace: Path) -> tuple[LiveSession, str]:
    """The session replayed, then `replay_complete`; the session live, and its state."""
    existing = ctx.daemon.registry.live.get(session_id)
    if existing is not None and existing.turn is not None:
        children = await children_shown(existing.store, session_id, _terminals_under(ctx, workspace))

        def running_frames(session_id: str, stored: list[MessageRecord], pending: set[str]) -> list[bytes]:
            return _running_frames(session_id, stored, pending, children, _terminals_under(ctx, workspace))

        session = await load_running(ctx, session_id, workspace, running_frames)
        waiting = await session.store.waiting_turn(session.id)
        return session, "requires_action" if waiting is not None else "running"
    session, found = await open_stored(ctx, session_id, workspace, _replay_stored)
    if found.waiting is not None or (found.elsewhere is not None and found.elsewhere[1] is not None):
        return session, "requires_action"  # a resumed turn asks again after the answer
    return session, "running" if found.elsewhere is not None or session.turn is not None else "idle"


def _terminals_under(ctx: ClientConnection, workspace: Path) -> str | None:
    """Where a replay's commands ran, when this client is shown terminals (None: it is not)."""
    return str(workspace) if ctx.client is not None and ctx.client.terminal_output_meta else None


def _running_frames(
    session_id: str,
    stored: list[MessageRecord],
    pending: set[str],
    children: dict[str, ChildShown],
    workspace: str | None,
) -> list[bytes]:
    replay = ReplayV2(session_id, pending, children=children, workspace=workspace)
    updates = replay.updates([(m.json_body(), m.status, m.turn_id, m.seq) for m in stored]) + replay.rest()
    return [*map(replay.frame, updates), replay.frame(REPLAY_COMPLETE)]


async def _replay_stored(ctx: ClientConnection, found: StoredSession) -> list[MessageView]:
    """A stored session's v2 replay (paged unless calls wait for approval), then its marker."""
    store, session_id, conn = found.store, found.record.id, ctx.connection
    workspace = _terminals_under(ctx, Path(found.record.workspace))
    children = await children_shown(store, session_id, workspace, paged=True)
    send = _with_children(store, workspace) if children else send_in_batches
    if found.pending is None:
        replay = ReplayV2(session_id, children=children, workspace=workspace)
        stored = await replay_pages(
            conn,
            store,
            session_id,
            turn_pages_of(store, session_id),
            lambda page: (
                [(r, b, s) for r, b, s, _t, _q in page],
                replay.feed([(b, s, t, q) for _r, b, s, t, q in page]),
            ),
            replay.finish,
            send,
        )
    else:  # its calls waiting for approval are pending, not failed
        records = await store.load_messages(session_id)
        stored = [(m.role, m.json_body(), m.status) for m in records]
        replay = ReplayV2(session_id, pending_ids(found.pending), children=children, workspace=workspace)
        await send(conn, replay.feed([(m.json_body(), m.status, m.turn_id, m.seq) for m in records]))
        await send(conn, replay.finish())
    conn.send_body(replay.frame(REPLAY_COMPLETE))
    return stored


def _with_children(store: HistoryStore, workspace: str | None) -> SendFrames:
    """Sends a replay's frames; a child's mark is its replay, read a page at a time there."""

    async def send(conn: Connection, frames: Iterator[bytes]) -> None:
        run: list[bytes] = []
        for each in frames:
            child = marked_child(each)
            if child is None:
                run.append(each)
                continue
            await send_in_batches(conn, iter(run))
            run = []
            async for page in child_pages(turn_pages_of(store, child), child, workspace):
                await send_in_batches(conn, page)
        await send_in_batches(conn, iter(run))

    return send


async def _resumed(ctx: ClientConnection, session_id: str, workspace: Path) -> tuple[LiveSession, str]:
    """No replay (v1's `session/resume`): the session live, and its state. A turn a stopped
    daemon left waiting for approval is not resumed: said once, after the answer."""
    session, _stored = await ctx.daemon.registry.revive(session_id, workspace)
    asking = await session.store.waiting_turn(session.id)
    ctx.session_opened.set()
    if session.turn is not None:
        return session, "requires_action" if asking is not None else "running"
    if asking is None:
        return session, "idle"
    session.left_waiting = True
    asyncio.get_running_loop().call_soon(_say_turn_waits, ctx, session.id, asking[0])
    return session, "requires_action"


def _say_turn_waits(ctx: ClientConnection, session_id: str, turn_id: str) -> None:
    sink = SessionUpdates(session_id, ctx.connection)
    sink.notice(f"\n[{_WAITING} (turn {turn_id})]\n")
    sink.flush()
