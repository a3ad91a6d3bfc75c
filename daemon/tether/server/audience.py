"""Which connections see which live session (`LiveSession.audience`), in the stdio and shared daemon.

Owns: joining it (`session/new`, `load`, `resume`), leaving it (`session/close` while others see
the session; a connection's end: the turns nobody else sees stop and their sessions end), and a
turn's end told to the other viewers. Must not: send a session's updates (the emitter does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from tether_protocol import loads
from tether_protocol.peer import RawResult

from ..transport.rpc import Route, TetherRPC
from .context import ClientConnection
from .daemon_services import STOP_GRACE_S

if TYPE_CHECKING:
    from ..services.live_session import LiveSession

# Methods after which the connection sees the session's updates (the session id: in the
# answer for `session/new`, in the params otherwise).
_OPENS = ("session/new", "session/load", "session/resume")


def watch_sessions(ctx: ClientConnection, rpc: TetherRPC) -> None:
    """Wrap ``rpc``'s opening and closing routes so that ``ctx`` joins and leaves the
    sessions' audiences (a prompt tells the others its turn ended: `turn_ended_elsewhere`)."""
    for name in _OPENS:
        _joining(ctx, rpc.routes[name])
    _closing(ctx, rpc.routes["session/close"])


def join(ctx: ClientConnection, session_id: str) -> None:
    """``ctx`` sees ``session_id``'s updates from now on (and is asked its open approvals)."""
    session = ctx.daemon.registry.live.get(session_id)
    if session is None or ctx.conn is None or ctx.conn in session.audience:
        return
    session.audience.append(ctx.conn)
    for ask in list(session.open_asks):
        ask.add(ctx)


def forget(ctx: ClientConnection) -> list[str]:
    """``ctx`` is no longer served: it leaves the daemon's connections and every audience;
    the sessions nobody sees any more."""
    daemon, conn = ctx.daemon, ctx.conn
    if conn is None:
        return []
    daemon.connections.pop(conn, None)
    alone: list[str] = []
    for session_id, session in daemon.registry.live.items():
        if conn in session.audience:
            session.audience.remove(conn)
            if not session.audience:
                alone.append(session_id)
    return alone


async def leave(ctx: ClientConnection) -> None:
    """The end of ``ctx`` in the shared daemon: it leaves every audience; the turns of the
    sessions nobody sees any more are cancelled, and those sessions stop being live."""
    daemon = ctx.daemon
    alone = forget(ctx)
    turns = [s.turn for sid in alone if (s := daemon.registry.live.get(sid)) and s.turn is not None]
    for turn in turns:
        turn.cancel()
    with anyio.move_on_after(STOP_GRACE_S):
        for turn in turns:
            await turn.done.wait()
    await _let_go(ctx, alone)


async def _let_go(ctx: ClientConnection, alone: list[str]) -> None:
    """The sessions nobody sees any more stop being live, as in a daemon of their own
    that exits: their queues, their MCP servers and their workspace's watch go with them
    (`session/load` makes one live again from its history). One another connection's LSP
    front uses stays, as does one whose turn did not stop in time."""
    from ..services.mcp_servers import session_closed

    daemon = ctx.daemon
    mine = ctx.lsp_front.sessions.values() if ctx.lsp_front is not None else ()
    fronts = [c.lsp_front for c in daemon.connections.values() if c.lsp_front is not None]
    used = {session_id for front in fronts for session_id in front.sessions.values()}
    for session_id in dict.fromkeys([*alone, *mine]):
        session = daemon.registry.live.get(session_id)
        if session is None or session.turn is not None or session.audience or session_id in used:
            continue
        await daemon.sessions.stop_live(session_id)
        session.closed = True
        await session_closed(ctx, session_id)


def _joining(ctx: ClientConnection, route: Route) -> None:
    handler = route.handler

    async def joined(params: Any) -> Any:
        result = await handler(params)
        found = getattr(result if route.method == "session/new" else params, "session_id", None)
        if isinstance(result, RawResult) and route.method == "session/new":  # a v2 answer, as JSON
            found = loads(result.json).get("sessionId")
        elif isinstance(params, dict):  # params a handler reads by version (`methods.Method.v2`)
            found = params.get("sessionId")
        if isinstance(found, str):
            join(ctx, found)
        return result

    route.handler = joined


def _closing(ctx: ClientConnection, route: Route) -> None:
    """`session/close` of a session other connections still see: this one stops seeing it,
    the session stays live for them."""
    handler = route.handler

    async def closed(params: Any) -> Any:
        session = ctx.daemon.registry.live.get(params.session_id)
        if session is not None and ctx.conn in session.audience and len(session.audience) > 1:
            session.audience.remove(ctx.conn)
            from tether_protocol import EmptyResult

            return EmptyResult()
        return await handler(params)  # the session ends, its audience with it

    route.handler = closed


def turn_ended_elsewhere(ctx: ClientConnection, session: LiveSession, result: Any) -> None:
    """A turn's end reaches the session's other connections as the `session_info_update`
    with `_meta.tether.turnEnded` a turn without a prompt request ends with (SPEC §4.4),
    after the turn's last update; the prompting connection has the prompt's answer."""
    others = [c for c in session.audience if c is not ctx.conn]
    tether = getattr(getattr(result, "meta", None), "tether", None)
    turn_id = getattr(tether, "turn_id", None)
    if not isinstance(turn_id, str) or not others:
        return
    from ..agent.sink import TurnEnded
    from ..rendering.acp_v1 import V1
    from ..rendering.emitter import frame

    update = V1.event(TurnEnded(turn_id, str(result.stop_reason)))
    assert update is not None  # v1 shows a turn's end
    body = frame(session.id, update)
    for conn in others:
        conn.send_body(body if getattr(conn, "protocol_version", 1) != 2 else _v2_idle(session.id, result))


def _v2_idle(session_id: str, result: Any) -> bytes:
    """A v1 window's turn end as its v2 viewers see a turn end: `state_update` idle."""
    from ..agent.sink import TurnStateChanged
    from ..rendering.acp_v2 import AcpV2
    from ..rendering.emitter import frame

    update = AcpV2(session_id).event(TurnStateChanged("idle", str(result.stop_reason)))
    assert update is not None
    return frame(session_id, update)
