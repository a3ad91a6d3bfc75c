"""`session/load` and `session/resume`: a stored session made live again (imported on the first load).

Owns: the whole replay before `session/load` answers, a turn left waiting for approval resumed
(load only), and `open_stored`, `load_running`, `replay_pages`, shared with `resume_v2.py`.
Must not: run turns itself (`turns.resume_turn` does) or touch SQL (the store does).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Iterator
from typing import TYPE_CHECKING, TypeVar, cast

from tether_protocol import LoadSessionParams, LoadSessionResult, PendingApprovals, collector_paused

from ..rendering import PagedReplay, SessionUpdates, replay_frames
from ..server.context import ClientConnection
from ..services.config_options import config_options
from ..services.mcp_servers import check_acp_servers, keep_acp_servers, start_in_background
from ..services.registry import StoredTail, check_workspace
from ..store import HistoryStore, MessageRecord, MessageView, SessionRecord, TurnMessageView, last_summary
from .sessions import commands_after_answer, modes

if TYPE_CHECKING:
    from pathlib import Path

    from ..services.live_session import LiveSession
    from ..services.sessions_service import StoredSession
    from ..transport.connection import Connection

# Replayed updates per write while a session is loaded (~70 KB of a typical history),
# and messages read per query while it is replayed (the first query fewer: the client
# sees the first updates sooner).
_REPLAY_BATCH = 256
_READ_PAGE = 1024
_FIRST_PAGE = 128
P = TypeVar("P")  # a stored message as a page gives it


async def send_in_batches(conn: Connection, frames: Iterator[bytes]) -> None:
    """Queue the frames in batches, letting the connection write each while the next
    is built: the client reads the history while it is being replayed. A client that
    reads slower than the replay is built holds it back (the pipe's high-water mark), so
    the replay never waits in memory whole."""
    while batch := list(itertools.islice(frames, _REPLAY_BATCH)):
        conn.send_bodies(batch)
        await asyncio.sleep(0)
        await conn.writable()


async def replay_while_reading(
    conn: Connection, store: HistoryStore, session_id: str, step_breaks: bool = False
) -> list[MessageView]:
    """Replay a session (with no approvals pending) while its messages are still being
    read, a page at a time; returns what the live session needs of them (`StoredTail`)."""
    replay = PagedReplay(session_id, step_breaks)
    pages_of = cast("AsyncGenerator[list[MessageView], None]", store.message_pages(session_id, _READ_PAGE, _FIRST_PAGE))
    return await replay_pages(
        conn,
        store,
        session_id,
        pages_of,
        lambda page: (page, replay.feed([(body, status) for _r, body, status in page])),
        replay.finish,
    )


def turn_pages_of(store: HistoryStore, session_id: str) -> AsyncGenerator[list[TurnMessageView], None]:
    """The session's messages with their turn ids (ACP v2's replay), paged as v1's replay reads them."""
    return cast(
        "AsyncGenerator[list[TurnMessageView], None]", store.turn_message_pages(session_id, _READ_PAGE, _FIRST_PAGE)
    )


# How a replay's frames are sent (`send_in_batches`, or a sender that expands marks in them).
SendFrames = Callable[["Connection", Iterator[bytes]], Awaitable[None]]
# A page of stored messages as (what the live session keeps of it, its replay's frames).
PageFrames = Callable[[list[P]], tuple[list[MessageView], Iterator[bytes]]]


async def replay_pages(
    conn: Connection,
    store: HistoryStore,
    session_id: str,
    pages_of: AsyncGenerator[list[P], None],
    feed: PageFrames[P],
    finish: Callable[[], Iterator[bytes]],
    send: SendFrames = send_in_batches,
) -> list[MessageView]:
    """Send each page's replay (`feed`) as it is read, then what `finish` holds back."""
    stored = StoredTail()
    asked = False
    async with contextlib.aclosing(pages_of) as pages:
        async for page in pages:
            views, frames = feed(page)
            stored.extend(views)
            await send(conn, frames)
            if not asked:  # once the first updates are on their way
                asked = True
                stored.expect(await last_summary(store, session_id))
    await send(conn, finish())
    return stored.views()


def _step_breaks(ctx: ClientConnection) -> bool:
    return ctx.client is not None and ctx.client.step_breaks


def pending_ids(pending: PendingApprovals | None) -> set[str]:
    return pending.call_ids() if pending is not None else set()


async def session_load(ctx: ClientConnection, params: LoadSessionParams) -> LoadSessionResult:
    # the history read and its replay build ~10 objects per message, none in a cycle
    with collector_paused():
        workspace = check_workspace(params.cwd)
        servers = check_acp_servers("session/load", params.mcp_servers)
        existing = ctx.daemon.registry.live.get(params.session_id)
        if existing is not None and existing.turn is not None:
            step_breaks = _step_breaks(ctx)
            session = await load_running(
                ctx,
                params.session_id,
                workspace,
                lambda sid, stored, pending: replay_frames(
                    sid,
                    [(m.json_body(), m.status) for m in stored],
                    pending,
                    step_breaks,
                ),
            )
        else:
            session = (await open_stored(ctx, params.session_id, workspace, _replay_v1))[0]
        keep_acp_servers(ctx, "session/load", params.session_id, workspace, servers)
        start_in_background(ctx, params.session_id)
        commands_after_answer(ctx, params.session_id, workspace)
        return LoadSessionResult(modes(session.mode), config_options(ctx, session))


# A replay of a stored session: sends it, returns what the live session needs of it.
Replay = Callable[[ClientConnection, "StoredSession"], Awaitable[list[MessageView]]]
# The frames of a running session's stored part: (session id, its messages, the calls it asks about).
RunningReplay = Callable[[str, "list[MessageRecord]", set[str]], Iterable[bytes]]


async def load_running(ctx: ClientConnection, session_id: str, workspace: Path, frames: RunningReplay) -> LiveSession:
    """Load of a session running a turn here: its stored part all at once (the running
    turn's own updates must come after the replay)."""
    session, stored = await ctx.daemon.registry.revive(session_id, workspace)
    # a call the running turn is asking about is pending, not failed (it may still run)
    waiting = await session.store.waiting_turn(session.id)
    ctx.connection.send_bodies(frames(session.id, stored, pending_ids(waiting[1] if waiting else None)))
    return session


async def _replay_v1(ctx: ClientConnection, found: StoredSession) -> list[MessageView]:
    store, record, pending = found.store, found.record, found.pending
    if pending is None:
        return await replay_while_reading(ctx.connection, store, record.id, _step_breaks(ctx))
    # its calls waiting for approval are pending, not failed
    stored = [(m.role, m.json_body(), m.status) for m in await store.load_messages(record.id)]
    frames = replay_frames(
        record.id,
        [(body, status) for _role, body, status in stored],
        pending_ids(pending),
        _step_breaks(ctx),
    )
    await send_in_batches(ctx.connection, frames)
    return stored


async def open_stored(
    ctx: ClientConnection, session_id: str, workspace: Path, replay: Replay
) -> tuple[LiveSession, StoredSession]:
    """A stored session made live after `replay` showed it; a turn a stopped daemon left
    waiting for approval is resumed: asked again right after the caller's answer (the
    caller must not await between this and its answer)."""
    found = await ctx.daemon.sessions.find(session_id, workspace)
    store, record = found.store, found.record
    stored = await replay(ctx, found)
    if found.elsewhere is not None:
        _say_running_elsewhere(ctx.connection, record, found.elsewhere[2], found.pending is not None)
    await _say_not_run(ctx, store, record.id)
    session = ctx.daemon.registry.make_live(store, record, workspace, stored)
    if session.turn is None:  # what another process writes next is read in at its first prompt
        await ctx.daemon.registry.note_stored(session)
    if found.waiting is not None and session.turn is None:
        # Ask again, and resume the turn where it stopped: the task's first step comes
        # after this one, which ends with the answer queued.
        from ..services.turns import resume_turn  # the turn's modules: only when one is resumed

        ctx.daemon.tasks.start("resumed turn", resume_turn, ctx, session, *found.waiting)
    ctx.session_opened.set()
    return session, found


async def _say_not_run(ctx: ClientConnection, store: HistoryStore, session_id: str) -> None:
    """Prompts a stopped daemon left queued: named in the transcript, never run later."""
    from ..services.queue import say_not_run
    from ..store import queue as stored

    say_not_run(ctx, session_id, await stored.not_run(store, session_id))


def _say_running_elsewhere(conn: Connection, record: SessionRecord, pid: object, asking: bool) -> None:
    sink = SessionUpdates(record.id, conn)
    sink.notice(
        f"\n[a turn of this session is running in another Tether process (pid {pid})"
        + (": its approvals are asked there" if asking else "")
        + "; a prompt here is refused until it ends]\n"
    )
    sink.flush()


async def session_resume(ctx: ClientConnection, params: LoadSessionParams) -> LoadSessionResult:
    workspace = check_workspace(params.cwd)
    servers = check_acp_servers("session/resume", params.mcp_servers)
    session, _stored = await ctx.daemon.registry.revive(params.session_id, workspace)
    keep_acp_servers(ctx, "session/resume", session.id, workspace, servers)
    start_in_background(ctx, session.id)
    waiting = await session.store.waiting_turn(session.id) if session.turn is None else None
    if waiting is not None:
        session.left_waiting = True
        # Not resumed (the client shows the history it has, so nothing of the turn is
        # sent): said once, after the answer, with the two ways on from here.
        from ..services.turns import say_turn_waits

        asyncio.get_running_loop().call_soon(say_turn_waits, ctx.connection, session.id, waiting[0])
    ctx.session_opened.set()
    return LoadSessionResult(modes(session.mode), config_options(ctx, session))
