"""What a handler is given: one client connection's state, and the daemon it is served by.

Owns: `ClientConnection`: a client's peer and connection, profile, narrowed settings, documents,
asker, LSP front, one-shot flags, its end, its warm-up, and `daemon` (`daemon_services.Daemon`).
Must not: implement a method, build the method table (`methods.py`), or keep a session's state
(`live_session.LiveSession` does).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from typing import TYPE_CHECKING

import anyio

from ..start_up import resume_collector
from .daemon_services import Daemon, LazyProvider
from .documents import DocumentStore

if TYPE_CHECKING:  # the turn's services are imported when a turn first needs them
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from ..approvals import ApprovalGate
    from ..config import Settings
    from ..handlers.lsp_agent.front import LspFront
    from ..providers.base import Provider
    from ..store import HistoryStore
    from ..tools.base import Elicit
    from ..tools.sandbox import WorkspaceSandbox
    from ..transport.connection import Connection
    from ..transport.rpc import TetherRPC
    from .asker import ClientAsker
    from .files import EditorFiles
    from .handshake import ClientProfile

log = logging.getLogger("tether.server")

# How long the warm-up waits for the client's first session before it starts anyway.
_WARM_UP_AFTER_S = 1.0
_WATCH_QUIET_S = 0.25  # a first prompt sent at once has arrived by then
# What the warm-up imports first: the turn (with the tools, the approvals, the journal and
# the conversation model); then, once no request runs (a first prompt sent at once streams
# without them), loading a stored session (the replay), the snapshots, and the gitignore
# matcher's pathspec (read by the first list_dir, glob or grep), and each tool's module (a
# cold turn imports a tool on its first call: tools/catalog.py).
_TURN_MODULES = ("tether.handlers.prompt",)
# (the command analysis: a cold first prompt's turn imports it only at its first command;
# a warm daemon has it before then)
_LATER_MODULES = ("tether.handlers.loading", "tether.handlers.snapshots", "pathspec", "tether.approvals.commands")
# and on an ACP v2 connection, what its first `session/resume` reads its params with
_LATER_V2_MODULES = ("tether.handlers.resume_v2", "tether_protocol.acp_v2.schema_types")
# The start-up's pause of the collector ends at the latest this long after the daemon serves.
_START_UP_S = 2.0
_ONE_SHOT_WATCH_AFTER_S = 1.0  # `tether run`: its workspace's watch starts after a second of the turn


class ClientConnection:
    """One client's connection: the state every handler is passed (as its first argument)."""

    rpc: TetherRPC  # set by whoever builds the method table over this connection (app.py)

    def __init__(self, daemon: Daemon, settings: Settings, root: Path, *, warm_up: bool = True) -> None:
        self.daemon = daemon
        self.settings = settings
        self.default_root = root
        # False for one turn in its client's process (`tether run`): nothing to get ahead of
        self.warm_up = warm_up
        self.client: ClientProfile | None = None
        self.initialized = False
        # the workspace config's refused keys were shown in a turn (once per connection)
        self.told_refused = False
        self.shutdown_requested = False
        self.exit_code = 0
        self.stopped = asyncio.Event()
        self.conn: Connection | None = None
        self.documents = DocumentStore()  # the client's open buffers
        self._asker: ClientAsker | None = None
        # the provider of a connection whose settings choose another answerer than the daemon's
        self._own_provider: LazyProvider | None = None
        # set when the first session is opened: the warm-up starts after it is answered
        self.session_opened = asyncio.Event()
        # the LSP agent front's state on this connection (server/lsp_agent/front.py), made on first use
        self.lsp_front: LspFront | None = None

    @property
    def connection(self) -> Connection:
        """The client's connection (attached before any request is handled)."""
        assert self.conn is not None, "no connection attached"
        return self.conn

    def attach(self, conn: Connection) -> None:
        """Serve ``conn``: the peer writes to it, the daemon counts it among its connections."""
        self.conn = conn
        self.rpc.attach(conn)
        self.daemon.connections[conn] = self

    async def provider(self) -> Provider:
        """The daemon's provider; a connection whose settings choose another answerer its own."""
        if self.daemon.answers_for(self.settings):
            return await self.daemon.provider(self.settings)
        if self._own_provider is None:
            self._own_provider = LazyProvider()
        return await self._own_provider.get(self.settings)

    def gate_for(self, workspace: Path, store: HistoryStore) -> ApprovalGate:
        """The approval gate of a workspace under this connection's settings (its deny rules,
        its network): the daemon's, shared with every connection whose settings agree."""
        return self.daemon.gate_for(workspace, store, self.settings)

    def editor_files(self, session_id: str, sandbox: WorkspaceSandbox) -> EditorFiles:
        """Where a session's tools read and write files: this client's editor when it can, else the disk."""
        from .files import EditorFiles

        return EditorFiles(
            session_id=session_id, sandbox=sandbox, documents=self.documents, client=self.client, rpc=self.rpc
        )

    def clarifier(self, session_id: str) -> Callable[[str], Awaitable[str | None]] | None:
        """How ask-first's question is put to this client in a form (None: it shows none)."""
        from .elicitation import clarifier  # only where ask-first is on

        return clarifier(self, session_id)

    def form_relay(self, session_id: str) -> Elicit | None:
        """How an MCP server's form is put to this client's user (None: it shows none)."""
        if self.client is None or not self.client.shows_forms:
            return None
        from .elicitation import mcp_form_relay  # only for a client that shows forms

        return mcp_form_relay(self, session_id)

    def asker(self) -> ClientAsker:
        """Who a turn asks: this client, or in the shared daemon every window that sees the session."""
        if self._asker is None:
            if self.daemon.shared:
                from ..shared.approvals import SharedAsker

                self._asker = SharedAsker(self)
            else:
                self._asker = self.own_asker()
        return self._asker

    def own_asker(self) -> ClientAsker:
        """This connection's own asker. In the shared daemon one approval is asked of each window
        that sees the session: none tells the turn's state (each would say `running` as its own
        request ends, while another's still waits), as before the sinks left the connection."""
        from .asker import ClientAsker

        return ClientAsker(self.rpc, self.client, {} if self.daemon.shared else self.daemon.registry.live)

    def accept_client(self, profile: ClientProfile, settings: Settings) -> None:
        self.client = profile
        self.settings = settings
        self.initialized = True
        self.rpc.acp_peer = profile.acp
        if profile.root is not None:
            self.default_root = profile.root
        self.daemon.tasks.start("warm-up", self._warm_up)

    async def _client_idle(self) -> None:
        """Returns once no request runs (the one that started the caller has sent its
        answer) and the answers are handed to the pipe, or after ``_WARM_UP_AFTER_S``
        (a long first prompt does not wait for it)."""
        with anyio.move_on_after(_WARM_UP_AFTER_S):
            await asyncio.sleep(0)
            while self.rpc.running_requests and not self.stopped.is_set():
                await anyio.sleep(0.005)
        if self.conn is not None:
            await self.conn.drain()

    async def watch_when(self) -> bool:
        """When a workspace's watch may start: once the client has been idle for
        ``_WATCH_QUIET_S`` (a prompt sent the instant `session/new` answers goes first: the
        watch's start is ~5-8 ms of imports); False when the daemon stops first (a stopping
        daemon watches nothing). One turn in its client's process (`tether run`): the client
        is never idle before the turn ends, so the watch starts after a second of it; a
        shorter turn (and its exit) never pays for watchfiles' import and the tree's walk."""
        if not self.warm_up:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopped.wait(), _ONE_SHOT_WATCH_AFTER_S)
            return not self.stopped.is_set()
        await self._client_idle()
        with anyio.move_on_after(_WATCH_QUIET_S):
            await self.stopped.wait()
        await self._client_idle()
        return not self.stopped.is_set()

    async def _warm_up(self) -> None:
        """Once the client's first session is open and its requests are answered (it is
        idle, or typing its first prompt), or after a second without one: import the turn's
        modules and build the provider, so the first prompt does not wait for them (its
        errors wait for the prompt; choosing may probe loopback servers). What only later
        requests need (``_LATER_MODULES``, the model picker's list from
        `config_options.fetch_models`) waits until no request runs, so a first prompt sent
        at once does not share the loop with it (a second at most: ``_client_idle``)."""
        if not self.warm_up:  # `tether run` imported the turn already, builds the provider at the prompt
            return
        waits = [asyncio.ensure_future(event.wait()) for event in (self.session_opened, self.stopped)]
        try:
            await asyncio.wait(waits, timeout=_WARM_UP_AFTER_S, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()
        while self.rpc.running_requests and not self.stopped.is_set():
            await anyio.sleep(0.005)
        if self.conn is not None:
            await self.conn.drain()  # the answers are on their way before the imports block
        if self.stopped.is_set():
            return  # a daemon on its way out builds nothing
        await self._warm_turn()
        await self._client_idle()
        if self.stopped.is_set():
            return
        v2 = getattr(self.conn, "protocol_version", 1) == 2
        for module in _LATER_MODULES + (
            _LATER_V2_MODULES if v2 else ()
        ):  # one at a time: a request waits for one at most
            importlib.import_module(module)
            await anyio.sleep(0)
        for tool_name in self.daemon.tools.names():  # a warm daemon's first call of each tool imports nothing
            self.daemon.tools.get(tool_name)
            await anyio.sleep(0)
        from .. import module_cache
        from ..services.config_options import fetch_models

        module_cache.save()  # with the warm-up's modules: the next daemon's warm-up reads them too
        module_cache.close()  # a long-running daemon holds no descriptor of it
        await fetch_models(self)  # the model picker's list: once per daemon, in the background

    async def _warm_turn(self) -> None:
        """What a first prompt needs: the turn's modules, the tools, the provider."""
        for module in _TURN_MODULES:
            importlib.import_module(module)
            await anyio.sleep(0)
        self.daemon.tools  # noqa: B018  (built now, not in the first prompt)
        await anyio.sleep(0)
        if self.settings.mcp_servers or any(s.mcp_servers for s in self.daemon.registry.live.values()):
            # the MCP SDK (pydantic models: the biggest import), in a thread: the loop goes on
            from anyio import to_thread

            await to_thread.run_sync(importlib.import_module, "tether.mcp.registry")
        try:
            await self.provider()
        except Exception as exc:  # reported to the client when a prompt needs it
            log.debug("provider not ready yet: %s", exc)

    async def end_start_up(self) -> None:
        """Start-up is over once the first session is answered and the client is idle (its
        first prompt may be running: it waits a second at most), or after ``_START_UP_S``, or
        when the connection ends: the collector resumes. A daemon serving one turn in its client's
        process (`tether run`) saves its class code cache at exit instead (`tether.cli`): its
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

    def stop(self, exit_code: int | None = None) -> None:
        """This connection ends (`exit`, or the client closed it)."""
        if exit_code is not None:
            self.exit_code = exit_code
        self.stopped.set()

    async def stop_turns(self) -> None:
        """`shutdown` or the end of this connection: the stdio daemon's every turn; in the
        shared daemon the turns of the sessions no other connection sees (the others run on)."""
        if not self.daemon.shared:
            await self.daemon.stop_turns()
            return
        from .audience import leave

        await leave(self)

    async def close(self) -> None:
        """After the connection's end: the provider it had of its own closes."""
        if self._own_provider is not None:
            await self._own_provider.aclose()
