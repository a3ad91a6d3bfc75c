"""`session/new|load|resume|list|close|delete|set_mode`.

ACP's ordering rule holds by construction: nothing is sent for a session before the
`session/new` answer, and `session/load` sends its whole replay before answering.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether_protocol._gc import collector_paused
from tether_protocol._messages import (
    ListSessionsParams,
    LoadSessionParams,
    NewSessionParams,
    SessionIdParams,
    SetModeParams,
)

from ..store import HistoryStore, MessageView
from ..transport.connection import Connection
from ..transport.rpc import Route
from .handshake import modes_state
from .registry import check_workspace
from .updates import PagedReplay, SessionUpdates, replay_frames

if TYPE_CHECKING:
    from .app import TetherServer


# Replayed updates per write while a session is loaded (~70 KB of a typical history),
# and messages read per query while it is replayed.
_REPLAY_BATCH = 256
_READ_PAGE = 1024


def iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).isoformat().replace("+00:00", "Z")


async def send_in_batches(conn: Connection, frames: Iterator[str]) -> None:
    """Queue the frames in batches, letting the connection write each while the next
    is built: the client reads the history while it is being replayed."""
    while batch := list(itertools.islice(frames, _REPLAY_BATCH)):
        conn.send_texts(batch)
        await asyncio.sleep(0)


async def replay_while_reading(conn: Connection, store: HistoryStore, session_id: str) -> list[MessageView]:
    """Replay a session (with no approvals pending) while its messages are still being
    read, a page at a time; returns them all."""
    stored: list[MessageView] = []
    replay = PagedReplay(session_id)
    async with contextlib.aclosing(store.message_pages(session_id, _READ_PAGE)) as pages:
        async for page in pages:
            stored.extend(page)
            await send_in_batches(conn, replay.feed([(body, status) for _role, body, status in page]))
    await send_in_batches(conn, replay.finish())
    return stored


def routes(server: TetherServer) -> list[Route]:
    registry = server.registry

    async def new(params: NewSessionParams) -> dict[str, Any]:
        workspace = check_workspace(params.cwd)
        session = await registry.create(workspace, server.settings.mode)
        return {"sessionId": session.id, "modes": modes_state(session.mode)}

    async def load(params: LoadSessionParams) -> dict[str, Any]:
        # the history read and its replay build ~10 objects per message, none in a cycle
        with collector_paused():
            return await _load(params)

    async def _load(params: LoadSessionParams) -> dict[str, Any]:
        workspace = check_workspace(params.cwd)
        conn = server.conn
        assert conn is not None
        existing = registry.live.get(params.session_id)
        if existing is not None and existing.turn is not None:
            # all at once: the running turn's own updates must come after the replay
            session, stored = await registry.revive(params.session_id, workspace)
            conn.send_texts(replay_frames(session.id, [(m.body, m.status) for m in stored]))
            return {"modes": modes_state(session.mode)}
        store, record = await registry.find_stored(params.session_id, workspace)
        waiting = await store.waiting_turn(record.id)
        # a turn another live daemon runs: shown as it stands there (its calls waiting for
        # approval are pending, not failed), neither asked nor resumed here
        elsewhere = await store.turn_elsewhere(record.id) if waiting is None else None
        pending = waiting[1] if waiting else elsewhere[1] if elsewhere else None
        if pending is None:
            stored = await replay_while_reading(conn, store, record.id)
        else:
            stored = [(m.role, m.body, m.status) for m in await store.load_messages(record.id)]
            pending_ids = {c["id"] for c in pending.get("calls", [])}
            await send_in_batches(conn, replay_frames(record.id, [(body, status) for _role, body, status in stored], pending_ids))
        if elsewhere is not None:
            sink = SessionUpdates(record.id, conn)
            sink.notice(
                f"\n[a turn of this session is running in another Tether process (pid {elsewhere[2]})"
                + (": its approvals are asked there" if pending else "")
                + "; a prompt here is refused until it ends]\n"
            )
            sink.flush()
        session = registry.make_live(store, record, workspace, stored)
        if waiting is not None and session.turn is None:
            # After the load answer: ask again, and resume the turn where it stopped.
            asyncio.get_running_loop().call_soon(server.resume_waiting, session, *waiting)
        return {"modes": modes_state(session.mode)}

    async def resume(params: LoadSessionParams) -> dict[str, Any]:
        workspace = check_workspace(params.cwd)
        session, _stored = await registry.revive(params.session_id, workspace)
        waiting = await session.store.waiting_turn(session.id) if session.turn is None else None
        if waiting is not None:
            # no replay, but a turn waiting for approval is asked again all the same
            asyncio.get_running_loop().call_soon(server.resume_waiting, session, *waiting)
        return {"modes": modes_state(session.mode)}

    async def list_(params: ListSessionsParams) -> dict[str, Any]:
        workspace = check_workspace(params.cwd) if params.cwd else Path(server.default_root)
        store = await registry.store_for(workspace.resolve())
        records, cursor = await store.list_sessions(cursor=params.cursor)
        result: dict[str, Any] = {
            "sessions": [
                {
                    "sessionId": r.id,
                    "cwd": r.workspace,
                    "title": r.title,
                    "updatedAt": iso(r.updated_at),
                }
                for r in records
            ]
        }
        if cursor:
            result["nextCursor"] = cursor
        return result

    async def close(params: SessionIdParams) -> dict[str, Any]:
        session = registry.get_live(params.session_id)
        if session.turn is not None:
            session.turn.cancel()
            await session.turn.done.wait()
        session.closed = True
        registry.live.pop(session.id, None)
        return {}

    async def delete(params: SessionIdParams) -> dict[str, Any]:
        session = registry.live.get(params.session_id)
        if session is not None:
            if session.turn is not None:
                session.turn.cancel()
                await session.turn.done.wait()
            registry.live.pop(session.id, None)
            store = session.store
        else:
            store, _record = await registry.find_stored(
                params.session_id, check_workspace(str(server.default_root))
            )
        await store.delete_session(params.session_id)
        return {}

    async def set_mode(params: SetModeParams) -> dict[str, Any]:
        session = registry.get_live(params.session_id)
        session.mode = params.mode_id
        await session.store.update_session(session.id, mode=params.mode_id)
        return {}

    return [
        Route("session/new", new, NewSessionParams),
        Route("session/load", load, LoadSessionParams),
        Route("session/resume", resume, LoadSessionParams),
        Route("session/list", list_, ListSessionsParams),
        Route("session/close", close, SessionIdParams),
        Route("session/delete", delete, SessionIdParams),
        Route("session/set_mode", set_mode, SetModeParams),
    ]
