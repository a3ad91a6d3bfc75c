"""The stdio daemon: a `Daemon` serving exactly one connection, and how any connection is made.

Owns: `connect()` (a `ClientConnection` with the method table as its routes, its audiences kept,
stdio and shared daemon alike) and `serve()` (until stdin closes or `exit`, then every turn
stopped cleanly, the daemon closed; the start-up's GC pause ended after the first session).
Must not: implement a method itself.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from ..config import Settings
from ..services.message_size import frame_limit
from ..transport.connection import Connection
from ..transport.rpc import TetherRPC
from ..transport.stdio import ProtocolFds
from .audience import watch_sessions
from .context import ClientConnection
from .daemon_services import STOP_GRACE_S, Daemon
from .handshake import ClientProfile
from .methods import routes, storage_failed

log = logging.getLogger("tether.server")

# How long a stopping daemon waits for cancelled turns to commit what they have.
_STOP_GRACE_S = STOP_GRACE_S
# How long it then waits for its background tasks (a warm-up still probing, a checkpoint)
# before cancelling them.
_TASKS_GRACE_S = 2.0


def connect(daemon: Daemon, settings: Settings, root: Path, *, warm_up: bool = True) -> ClientConnection:
    """A client connection of ``daemon``, with the method table bound to it (``rpc``)."""
    ctx = ClientConnection(daemon, settings, root, warm_up=warm_up)
    ctx.rpc = TetherRPC(routes(ctx), storage_failed)
    watch_sessions(ctx, ctx.rpc)
    return ctx


async def serve(
    fds: ProtocolFds,
    settings: Settings,
    root: Path,
    *,
    framing: str | None = None,
    accepted: tuple[ClientProfile, Settings] | None = None,
    leftover: bytes = b"",
    warm_up: bool = True,
) -> int:
    daemon = Daemon(settings)
    server = connect(daemon, settings, root, warm_up=warm_up)
    daemon.watch_after = server.watch_when  # the one client's pace: watches start when it is idle
    async with daemon.lifetime(_TASKS_GRACE_S):  # owns the background tasks (handlers' task group)
        return await _serve(server, fds, framing=framing, accepted=accepted, leftover=leftover)


async def finish_requests(server: ClientConnection, conn: Connection, grace: float) -> None:
    """A connection's end (the daemon's, or one window's of the shared daemon): take no new
    requests, stop its turns, let the requests still running answer (up to ``grace``
    seconds), then flush what is queued for the client."""
    server.rpc.shutting_down = True
    await server.stop_turns()
    await server.rpc.wait_idle(grace)
    server.rpc.cancel_all()
    await asyncio.sleep(0)
    try:
        await asyncio.wait_for(conn.drain(), 2.0)
    except (asyncio.TimeoutError, OSError):
        pass


async def _serve(
    server: ClientConnection,
    fds: ProtocolFds,
    *,
    framing: str | None,
    accepted: tuple[ClientProfile, Settings] | None,
    leftover: bytes,
) -> int:
    if accepted is not None:
        server.accept_client(*accepted)
    conn = Connection(
        fds.read_fd,
        fds.write_fd,
        server.rpc.handle_message,
        server.stop,
        framing,  # type: ignore[arg-type]
        frame_limit(server.settings.max_message_mib),
    )
    if accepted is not None:  # `initialize` answered by the fast start (early.py)
        conn.protocol_version = accepted[0].wire_version
    server.attach(conn)
    server.daemon.tasks.start("end of start-up", server.end_start_up)
    await conn.start(leftover)
    await server.stopped.wait()
    await finish_requests(server, conn, _STOP_GRACE_S)
    await server.close()
    await server.daemon.close()  # its stores, its MCP servers (no process outlives it), its provider
    conn.close()
    return server.exit_code
