"""Approvals in the shared daemon: each connection that sees the session is asked; the first answer wins.

Owns: `SharedAsker` (a connection's asker in the shared daemon) and `Ask`: one approval asked of
each connection seeing the session (and of one that loads it meanwhile: `LiveSession.open_asks`),
its first real answer, and the request cancelled on the others (ACP `$/cancel_request`).
Must not: decide the approval (the gate does) or build a request (`server/permission.py` does).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..approvals import ApprovalRequest, AskerAnswer
from ..server.asker import ClientAsker

if TYPE_CHECKING:
    from ..server.context import ClientConnection
    from ..server.daemon_services import Served
    from ..services.ports import Approver


class Ask:
    """One approval, asked of several connections."""

    def __init__(self, request: ApprovalRequest, reason: str) -> None:
        self.request = request
        self.reason = reason
        self._tasks: set[asyncio.Task[AskerAnswer]] = set()
        self._asked: set[int] = set()
        self._answers: asyncio.Queue[AskerAnswer] = asyncio.Queue()

    def add(self, server: Approver) -> None:
        if id(server) in self._asked:
            return
        self._asked.add(id(server))
        task = asyncio.ensure_future(server.own_asker().ask(self.request, self.reason))
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[AskerAnswer]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        self._answers.put_nowait(task.result() if task.exception() is None else AskerAnswer("cancelled"))

    async def answer(self) -> AskerAnswer:
        """The first answer that decides (an "unavailable" one waits for the others)."""
        fallback: AskerAnswer | None = None
        while True:
            if not self._tasks and self._answers.empty():
                return fallback or AskerAnswer("unavailable", detail="no client can be asked")
            found = await self._answers.get()
            if found.option != "unavailable":
                return found
            fallback = found

    def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()  # the peer sends the client `$/cancel_request`


class SharedAsker(ClientAsker):
    """Asks every connection that sees the session; the first to answer decides."""

    def __init__(self, server: ClientConnection) -> None:
        super().__init__(server.rpc, server.client, server.daemon.registry.live)
        self._server = server

    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        from ..server.permission import waiting_on_user

        daemon = self._server.daemon
        ask = Ask(request, reason)
        # not live for a sub-agent's session: no window sees it, its parent's asks it
        session = daemon.registry.live.get(request.session_id)
        seen = session.audience if session is not None else []
        viewers: list[Served] = [daemon.connections[c] for c in seen if c in daemon.connections]
        for server in viewers or [self._server]:
            ask.add(server)
        # a window that loads the session while this waits is asked too (`audience.join`)
        asks = session.open_asks if session is not None else []
        asks.append(ask)
        try:
            # told once here, not by each window's request (one ending says nothing while another waits)
            with waiting_on_user(self.turn_sink(request)):
                return await ask.answer()
        finally:
            ask.close()
            if ask in asks:
                asks.remove(ask)
