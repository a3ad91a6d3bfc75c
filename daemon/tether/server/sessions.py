"""`session/new|load|resume|list|close|delete|set_mode`, and dropping a turn left waiting.

ACP's ordering rule holds by construction: nothing is sent for a session before the
`session/new` answer, and `session/load` sends its whole replay before answering.
A turn a stopped daemon left waiting for approval is resumed by `session/load` only;
`session/resume` says it waits, and `session/cancel` then drops it (`drop_waiting_turn`).
Must not: run turns itself (`prompt.resume_turn` does) or touch SQL (the store does).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether_protocol._errors import InvalidParams
from tether_protocol._gc import collector_paused
from tether_protocol._messages import (
    ListSessionsParams,
    LoadSessionParams,
    NewSessionParams,
    SessionIdParams,
    SetModeParams,
)

from ..agent.session import AgentSession
from ..store import HistoryStore, InvalidCursor, MessageRecord, MessageView
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


# After `session/resume` of a session whose turn a stopped daemon left waiting for approval
WAITING_NOTICE = (
    "a turn of this session was left waiting for approval when a Tether process stopped: "
    "session/load shows it and asks again; session/cancel drops it"
)
_DROPPED = "not run: the turn was cancelled while this call waited for approval"
_DROPPED_STARTED = (
    "cancelled: it was approved and had started when Tether stopped, so it may have run "
    "(check what it does before running it again)"
)


def conn_of(server: TetherServer) -> Connection:
    assert server.conn is not None
    return server.conn


def _say_turn_waits(conn: Connection, session_id: str, turn_id: str) -> None:
    sink = SessionUpdates(session_id, conn)
    sink.notice(f"\n[{WAITING_NOTICE} (turn {turn_id})]\n")
    sink.flush()


async def drop_waiting_turn(server: TetherServer, session: AgentSession) -> bool:
    """`session/cancel` of a session with no turn running here whose turn a stopped daemon
    left waiting for approval (after `session/resume`): the turn ends `cancelled`, each
    call still to run gets a failed result (so the conversation stays paired), the client
    gets those results and `turnEnded`. Whether there was such a turn."""
    store = session.store
    waiting = await store.waiting_turn(session.id)
    if waiting is None:
        return False
    turn_id, pending = waiting
    calls = [c for c in pending.get("calls", []) if isinstance(c, dict) and "id" in c]
    results = {c["id"]: _DROPPED_STARTED if c.get("started") else _DROPPED for c in calls}
    bodies = [
        {"role": "tool", "tool_call_id": c["id"], "name": c.get("name", ""), "content": results[c["id"]],
         "is_error": True}
        for c in calls
    ]
    records = [MessageRecord(role="tool", body=body) for body in bodies]
    if not await store.cancel_waiting(session.id, turn_id, records):
        return False
    if server.registry.live.get(session.id) is session and session.turn is None:
        # the model's view had "result missing" stand-ins for these calls
        await server.registry.revive(session.id, session.workspace)
    sink = SessionUpdates(session.id, conn_of(server))
    for call_id, text in results.items():
        sink.tool_call_update(call_id, status="failed", content_text=text)
    sink.update(
        {
            "sessionUpdate": "session_info_update",
            "_meta": {"tether": {"turnEnded": {"turnId": turn_id, "stopReason": "cancelled"}}},
        }
    )
    sink.flush()
    return True


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
            # a call the running turn is asking about is pending, not failed (it may still run)
            waiting = await session.store.waiting_turn(session.id)
            pending_ids = {c["id"] for c in waiting[1].get("calls", []) if isinstance(c, dict)} if waiting else set()
            conn.send_texts(replay_frames(session.id, [(m.body, m.status) for m in stored], pending_ids))
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
            session.left_waiting = True
            # Not resumed (the client shows the history it has, so nothing of the turn is
            # sent): said once, after the answer, with the two ways on from here.
            asyncio.get_running_loop().call_soon(_say_turn_waits, conn_of(server), session.id, waiting[0])
        return {"modes": modes_state(session.mode)}

    async def list_(params: ListSessionsParams) -> dict[str, Any]:
        workspace = check_workspace(params.cwd) if params.cwd else Path(server.default_root)
        store = await registry.store_for(workspace.resolve())
        try:
            records, cursor = await store.list_sessions(cursor=params.cursor)
        except InvalidCursor as exc:
            raise InvalidParams(f"invalid params for session/list: params.cursor: {exc}") from exc
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
