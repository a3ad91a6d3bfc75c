"""The daemon: one connection, one method table, the sessions behind it.

Owns: `TetherServer` — the `ServerContext` its handlers are given, with the method table
(`methods.py`) bound to it as the transport's routes, and `lifetime()`, the task group
that owns every background task while the daemon runs — and `serve()`, which runs until
stdin closes or `exit` arrives and then stops every turn cleanly, and ends the start-up's
pause of the garbage collector (`tether.start_up`) once the first session is answered.
Must not: implement a method itself.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from ..config import Settings
from ..start_up import resume_collector
from ..transport.connection import Connection
from ..transport.rpc import TetherRPC
from ..transport.stdio import ProtocolFds
from .context import STOP_GRACE_S, ServerContext
from .handshake import ClientProfile
from .mcp_servers import stop_all
from .methods import routes

log = logging.getLogger("tether.server")

# How long a stopping daemon waits for cancelled turns to commit what they have.
_STOP_GRACE_S = STOP_GRACE_S
# How long it then waits for its background tasks (a warm-up still probing, a checkpoint)
# before cancelling them.
_TASKS_GRACE_S = 2.0
# The start-up's pause of the collector ends at the latest this long after the daemon serves.
_START_UP_S = 2.0
_ONE_SHOT_WATCH_AFTER_S = 1.0  # `tether run`: its workspace's watch starts after a second of the turn


class TetherServer(ServerContext):
    """The context of one connection, with the method table bound to it (``rpc``)."""

    def __init__(self, settings: Settings, root: Path, *, warm_up: bool = True) -> None:
        super().__init__(settings, root)
        self.rpc = TetherRPC(routes(self))
        self.warm_up = warm_up

    async def _warm_up(self) -> None:
        # a daemon serving one turn in its client's process (`tether run`) has imported
        # the turn already and builds the provider at the prompt: nothing to get ahead of
        if self.warm_up:
            await super()._warm_up()

    async def _watch_when(self) -> bool:
        # one turn in its client's process (`tether run`): the client is never idle before
        # the turn ends, so the watch starts after a second of it; a shorter turn (and its
        # exit) never pays for watchfiles' import and the tree's walk
        if self.warm_up:
            return await super()._watch_when()
        try:
            await asyncio.wait_for(self.stopped.wait(), _ONE_SHOT_WATCH_AFTER_S)
        except asyncio.TimeoutError:
            pass
        return not self.stopped.is_set()

    async def end_start_up(self) -> None:
        """Start-up is over once the first session is answered and the client is idle (its
        first prompt may be running: it waits a second at most), or after ``_START_UP_S``, or
        when the daemon stops: the collector resumes. A daemon serving one turn in its client's
        process (`tether run`) saves its class code cache at exit instead (`tether_cli`): its
        turn makes classes until then."""
        waits = [asyncio.ensure_future(event.wait()) for event in (self.session_opened, self.stopped)]
        try:
            await asyncio.wait(waits, timeout=_START_UP_S, return_when=asyncio.FIRST_COMPLETED)
            if self.session_opened.is_set() and not self.stopped.is_set():
                await self._client_idle()
        finally:
            for wait in waits:
                wait.cancel()
            resume_collector(class_code_made=self.warm_up)

    @asynccontextmanager
    async def lifetime(self) -> AsyncIterator[TetherServer]:
        """While this block runs, the daemon's background tasks run in its task group
        (those started before it wait for it). On the way out the watchers stop, and the
        tasks get ``_TASKS_GRACE_S`` to finish before what still runs is cancelled."""
        async with self.tasks.running(_TASKS_GRACE_S):
            try:
                yield self
            finally:
                self.registry.stop_watchers()


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
    server = TetherServer(settings, root, warm_up=warm_up)
    async with server.lifetime():  # owns the background tasks (handlers' task group)
        return await _serve(server, fds, framing=framing, accepted=accepted, leftover=leftover)


async def finish_requests(server: TetherServer, conn: Connection, grace: float) -> None:
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
    server: TetherServer,
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
    )
    if accepted is not None:  # `initialize` answered by the fast start (early.py)
        conn.protocol_version = accepted[0].wire_version
    server.conn = conn
    server.rpc.attach(conn)
    server.tasks.start("end of start-up", server.end_start_up)
    await conn.start(leftover)
    await server.stopped.wait()
    await finish_requests(server, conn, _STOP_GRACE_S)
    await server.registry.close_all()
    await stop_all(server)  # MCP servers: no process outlives the daemon
    await server.lazy_provider.aclose()
    conn.close()
    return server.exit_code
