"""What every connection of the shared daemon shares, and each connection's server on it.

Owns: `Hub` — the daemon's settings (user config + its own environment + its flags, read
once at start), the live sessions and the per-workspace stores (one writer per
workspace's history), the provider (built once), the tools, the approval gates, the
background tasks, which connections see which session (`audience`: the emitter sends a
session's updates to each) — and `ClientServer`, one connection's `TetherServer`: its own
client profile, settings (its workspace's config and `initializationOptions` on top of
the daemon's), documents and JSON-RPC peer, the rest borrowed from the hub; when it ends,
the sessions only it had open stop being live.
Must not: read a client's environment, or stop a turn another connection still watches.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ..config import Settings, load_settings
from ..server.app import TetherServer
from ..server.context import LazyProvider
from ..server.registry import SessionRegistry, credential_stores
from ..server.sessions_service import LiveSessions
from ..server.tasks import BackgroundTasks
from ..transport.connection import Connection
from ..transport.rpc import Route

if TYPE_CHECKING:
    from ..approvals import ApprovalGate
    from ..providers.base import Provider
    from ..providers.models_list import ModelCatalog
    from ..server.asker import ClientAsker
    from ..tools.registry import ToolRegistry

log = logging.getLogger("tether.shared")

# What decides who answers: a connection whose settings differ here gets its own provider.
_PROVIDER_KEYS = ("provider", "model", "base_url", "api_key", "script", "record", "cassette", "max_retries")
# Methods after which the connection sees the session's updates (the session id: in the
# answer for `session/new`, in the params otherwise).
_OPENS = ("session/new", "session/load", "session/resume")
# Methods answered when their turn ends: the other connections that see the session are
# told it ended (they sent no request that would answer).
_PROMPTS = ("session/prompt", "_tether/session/steer")


class Hub:
    """The shared state of the daemon's connections."""

    def __init__(self, settings: Settings, flags: dict[str, object]) -> None:
        self.settings = settings
        self.flags = flags
        self.tasks = BackgroundTasks()
        # a watch starts at once: the hub serves many windows, none of them its start-up
        self.registry = SessionRegistry(
            Path(settings.home) if settings.home else None, self.tasks.start, stores=credential_stores(settings))
        self.sessions = LiveSessions(self.registry)
        self.gates: dict[Path, ApprovalGate] = {}
        self.tools: ToolRegistry | None = None
        self.model_catalog: ModelCatalog | None = None
        self.lazy_provider = LazyProvider()
        self.clients: dict[Connection, ClientServer] = {}
        # session id -> the connections that see its updates (`SessionUpdates` reads it)
        self.audience: dict[str, list[Connection]] = {}

    def settings_for(self, root: Path) -> Settings:
        """A connection's settings: the daemon's layers with its workspace's config."""
        return load_settings(root, flags=self.flags)

    async def provider(self) -> Provider:
        return await self.lazy_provider.get(self.settings)

    def join(self, session_id: str, conn: Connection) -> None:
        """``conn`` sees ``session_id``'s updates from now on (and its open approvals)."""
        seen = self.audience.setdefault(session_id, [])
        session = self.registry.live.get(session_id)
        if conn not in seen:
            seen.append(conn)
            for ask in list(session.open_asks) if session is not None else ():
                ask.add(self.clients[conn])

    def leave(self, conn: Connection) -> list[str]:
        """Forget ``conn``; the sessions nobody sees any more."""
        self.clients.pop(conn, None)
        alone: list[str] = []
        for session_id, seen in list(self.audience.items()):
            if conn in seen:
                seen.remove(conn)
                if not seen:
                    del self.audience[session_id]
                    alone.append(session_id)
        return alone

    @property
    def busy(self) -> bool:
        return bool(self.clients) or any(s.turn is not None for s in self.registry.live.values())

    async def close(self) -> None:
        turns = [s.turn for s in self.registry.live.values() if s.turn is not None]
        for turn in turns:
            turn.cancel()
        with anyio.move_on_after(5.0):
            for turn in turns:
                await turn.done.wait()
        await self.registry.close_all()
        await self.lazy_provider.aclose()


class ClientServer(TetherServer):
    """One connection's server: its own client and settings, the hub's sessions and services."""

    def __init__(self, hub: Hub, root: Path) -> None:
        super().__init__(hub.settings_for(root), root)
        self.hub = hub
        self.tasks = hub.tasks
        self.registry = hub.registry
        self.sessions = hub.sessions
        self._gates = hub.gates
        self._own_provider = False
        for name in _OPENS:
            self.rpc.routes[name] = _joining(self, self.rpc.routes[name])
        self.rpc.routes["session/close"] = _closing(self, self.rpc.routes["session/close"])
        for name in _PROMPTS:
            self.rpc.routes[name] = _prompting(self, self.rpc.routes[name])

    @property
    def tools(self) -> ToolRegistry:
        if self.hub.tools is None:
            self.hub.tools = TetherServer.tools.fget(self)  # type: ignore[attr-defined]
        return self.hub.tools

    @property
    def model_catalog(self) -> ModelCatalog | None:
        hub = getattr(self, "hub", None)
        return hub.model_catalog if hub is not None else None

    @model_catalog.setter
    def model_catalog(self, catalog: ModelCatalog | None) -> None:
        hub = getattr(self, "hub", None)
        if hub is not None and catalog is not None:
            hub.model_catalog = catalog

    async def provider(self) -> Provider:
        """The daemon's provider; a connection whose options choose another answerer its own."""
        mine, theirs = self.settings, self.hub.settings
        if all(getattr(mine, k) == getattr(theirs, k) for k in _PROVIDER_KEYS):
            return await self.hub.provider()
        self._own_provider = True
        return await super().provider()

    def asker(self) -> ClientAsker:
        if self._asker is None:
            from .approvals import SharedAsker

            self._asker = SharedAsker(self)
        return self._asker

    def own_asker(self) -> ClientAsker:
        """This connection's asker (the shared one asks each viewer's)."""
        from ..server.asker import ClientAsker

        return ClientAsker(self.rpc, self.client)

    async def stop_turns(self) -> None:
        """`shutdown` or the end of this connection: the turns of sessions no other
        connection sees are cancelled; the others run on."""
        alone = self.hub.leave(self.connection) if self.conn is not None else []
        turns = [s.turn for sid in alone if (s := self.registry.live.get(sid)) and s.turn is not None]
        for turn in turns:
            turn.cancel()
        with anyio.move_on_after(5.0):
            for turn in turns:
                await turn.done.wait()
        await self._let_go(alone)

    async def _let_go(self, alone: list[str]) -> None:
        """The sessions nobody sees any more stop being live, as in a daemon of their own
        that exits: their queues and their workspace's watch go with them (`session/load`
        makes one live again from its history). One another connection's LSP front uses
        stays, as does one whose turn did not stop in time."""
        mine = self.lsp_front.sessions.values() if self.lsp_front is not None else ()
        fronts = [c.lsp_front for c in self.hub.clients.values() if c.lsp_front is not None]
        used = {session_id for front in fronts for session_id in front.sessions.values()}
        for session_id in dict.fromkeys([*alone, *mine]):
            session = self.registry.live.get(session_id)
            if session is None or session.turn is not None or session_id in self.hub.audience or session_id in used:
                continue
            await self.sessions.stop_live(session_id)
            session.closed = True

    async def close_own(self) -> None:
        if self._own_provider:
            await self.lazy_provider.aclose()


def _joining(server: ClientServer, route: Route) -> Route:
    handler = route.handler

    async def joined(params: Any) -> Any:
        result = await handler(params)
        session_id = _session_id(route.method, params, result)
        if session_id and server.conn is not None:
            server.hub.join(session_id, server.conn)
        return result

    route.handler = joined
    return route


def _closing(server: ClientServer, route: Route) -> Route:
    """`session/close` of a session other connections still see: this one stops seeing it,
    the session stays live for them."""
    handler = route.handler

    async def closed(params: Any) -> Any:
        seen = server.hub.audience.get(params.session_id, [])
        if server.conn in seen and len(seen) > 1:
            seen.remove(server.conn)
            from tether_protocol._sessions import EmptyResult

            return EmptyResult()
        result = await handler(params)
        # closed: no window sees it any more (one that loads it again joins afresh)
        server.hub.audience.pop(params.session_id, None)
        return result

    route.handler = closed
    return route


def _prompting(server: ClientServer, route: Route) -> Route:
    """A turn's end reaches the session's other connections as the `session_info_update`
    with `_meta.tether.turnEnded` a turn without a prompt request ends with (SPEC §4.4),
    after the turn's last update; the prompting connection has the prompt's answer."""
    handler = route.handler

    async def prompted(params: Any) -> Any:
        result = await handler(params)
        tether = getattr(getattr(result, "meta", None), "tether", None)
        turn_id = getattr(tether, "turn_id", None)
        others = [c for c in server.hub.audience.get(params.session_id, ()) if c is not server.conn]
        if isinstance(turn_id, str) and others:
            from ..agent.sink import TurnEnded
            from ..server.updates.acp_v1 import V1
            from ..server.updates.emitter import frame

            update = V1.event(TurnEnded(turn_id, str(result.stop_reason)))
            assert update is not None  # v1 shows a turn's end
            body = frame(params.session_id, update)
            for conn in others:
                conn.send_body(body)
        return result

    route.handler = prompted
    return route


def _session_id(method: str, params: Any, result: Any) -> str | None:
    if method == "session/new":
        found = getattr(result, "session_id", None)
    else:
        found = getattr(params, "session_id", None)
    return found if isinstance(found, str) else None
