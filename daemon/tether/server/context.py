"""What a handler is given: the daemon's services and its per-connection state, typed.

Owns: `ServerContext` — the settings and the client's profile (each connection's: a turn's
tools get its `sandbox` setting, there is no process default), the live sessions
(`registry`) and the sessions service over them (`sessions`), the editor's documents,
the tools, the approval gates, the provider (built once), the client asker, the
background tasks (`tasks`), the JSON-RPC peer (`rpc`) and connection (`conn`), the LSP
agent front's state (`lsp_front`), and the stop signal — and `LazyProvider`, a provider
built once on first use: how both this context and the shared daemon's hub make theirs.
Must not: implement a method (the handler modules do) or build the method table
(`methods.py`).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from ..config import Settings
from ..transport.connection import Connection
from ..transport.rpc import TetherRPC
from .documents import DocumentStore
from .handshake import ClientProfile
from .registry import SessionRegistry, credential_stores
from .sessions_service import LiveSessions
from .tasks import BackgroundTasks

if TYPE_CHECKING:  # the turn's services are imported when a turn first needs them
    from ..approvals import ApprovalGate
    from ..config.mcp_servers import McpServerConfig
    from ..mcp.manager import McpManager
    from ..providers.base import Provider
    from ..providers.models_list import ModelCatalog
    from ..store import HistoryStore
    from ..tools.registry import ToolRegistry
    from .asker import ClientAsker
    from .lsp_agent.front import LspFront

log = logging.getLogger("tether.server")

# How long a stopping daemon waits for cancelled turns to commit what they have.
STOP_GRACE_S = 5.0
# How long the warm-up waits for the client's first session before it starts anyway.
_WARM_UP_AFTER_S = 1.0
_WATCH_QUIET_S = 0.25  # a first prompt sent at once has arrived by then
# What the warm-up imports first: the turn (with the tools, the approvals, the journal and
# the conversation model); then, once no request runs (a first prompt sent at once streams
# without them), loading a stored session (the replay), the snapshots, and the gitignore
# matcher's pathspec (read by the first list_dir, glob or grep), and each tool's module (a
# cold turn imports a tool on its first call: tools/catalog.py).
_TURN_MODULES = ("tether.server.prompt",)
# (the command analysis: a cold first prompt's turn imports it only at its first command;
# a warm daemon has it before then)
_LATER_MODULES = ("tether.server.loading", "tether.server.snapshots", "pathspec", "tether.approvals.commands")


class LazyProvider:
    """A provider chosen from the settings on first use (choosing may probe loopback servers),
    once however many callers ask at the same time; its owner closes it."""

    def __init__(self) -> None:
        self.built: Provider | None = None
        self._lock = anyio.Lock()

    async def get(self, settings: Settings) -> Provider:
        if self.built is None:
            async with self._lock:
                if self.built is None:
                    from ..providers.select import make_provider

                    self.built = await make_provider(settings)
        return self.built

    async def aclose(self) -> None:
        """Close the provider, if one was built."""
        if self.built is not None:
            await self.built.aclose()


class ServerContext:
    """The services and state every handler is passed (as its first argument)."""

    rpc: TetherRPC  # set by whoever builds the method table over this context

    def __init__(self, settings: Settings, root: Path) -> None:
        self.settings = settings
        self.default_root = root
        self.client: ClientProfile | None = None
        self.initialized = False
        # the workspace config's refused keys were shown in a turn (once per daemon)
        self.told_refused = False
        self.shutdown_requested = False
        self.exit_code = 0
        self.stopped = asyncio.Event()
        self.conn: Connection | None = None
        self._tools: ToolRegistry | None = None
        self.documents = DocumentStore()
        self.tasks = BackgroundTasks()
        self._gates: dict[Path, ApprovalGate] = {}
        self.registry = SessionRegistry(
            Path(settings.home) if settings.home else None, self.tasks.start, self._watch_when,
            credential_stores(settings),
        )
        self.sessions = LiveSessions(self.registry)
        self.lazy_provider = LazyProvider()
        # the provider's models for the model picker, once listed (config_options.fetch_models)
        self.model_catalog: ModelCatalog | None = None
        self._asker: ClientAsker | None = None
        # MCP servers (server/mcp_servers.py): the manager (made by a turn with servers),
        # the servers ACP clients gave their sessions, what each session was told
        self.mcp: McpManager | None = None
        self.mcp_session_servers: dict[str, tuple[McpServerConfig, ...]] = {}
        self.mcp_told: dict[str, set[str]] = {}
        # set when the first session is opened: the warm-up starts after it is answered
        self.session_opened = asyncio.Event()
        # the LSP agent front's state on this connection (server/lsp_agent/front.py), made on first use
        self.lsp_front: LspFront | None = None

    @property
    def connection(self) -> Connection:
        """The client's connection (attached before any request is handled)."""
        assert self.conn is not None, "no connection attached"
        return self.conn

    @property
    def tools(self) -> ToolRegistry:
        """The tools a turn may call (built on first use: a session is opened without them)."""
        if self._tools is None:
            from ..tools.registry import ToolRegistry, builtin_tools

            self._tools = ToolRegistry(builtin_tools())
        return self._tools

    async def provider(self) -> Provider:
        """The provider, chosen on first use (choosing may probe loopback servers)."""
        return await self.lazy_provider.get(self.settings)

    def gate_for(self, workspace: Path, store: HistoryStore) -> ApprovalGate:
        """The approval gate of a workspace (its rules live in that workspace's store)."""
        gate = self._gates.get(workspace)
        if gate is None:
            from ..approvals import ApprovalGate

            gate = ApprovalGate(
                store.rules,
                self.settings.deny_commands,
                network_commands=self.settings.network_commands,
                network_all=self.settings.network == "on",
                network_proxy=self.settings.network == "allowlist",
                workspace=workspace,
                sandbox_auto_allow=self.settings.sandbox_auto_allow == "on",
                allowed_domains=self.settings.allowed_domains,
            )
            self._gates[workspace] = gate
        return gate

    def asker(self) -> ClientAsker:
        if self._asker is None:
            from .asker import ClientAsker

            self._asker = ClientAsker(self.rpc, self.client)
        return self._asker

    def accept_client(self, profile: ClientProfile, settings: Settings) -> None:
        self.client = profile
        self.settings = settings
        self.initialized = True
        self.rpc.acp_peer = profile.acp
        if profile.root is not None:
            self.default_root = profile.root
        self.tasks.start("warm-up", self._warm_up)

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

    async def _watch_when(self) -> bool:
        """When a workspace's watch may start: once the client has been idle for
        ``_WATCH_QUIET_S`` (a prompt sent the instant `session/new` answers goes first: the
        watch's start is ~5-8 ms of imports); False when the daemon stops first (a stopping
        daemon watches nothing)."""
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
        for module in _LATER_MODULES:  # one at a time: a request waits for one at most
            importlib.import_module(module)
            await anyio.sleep(0)
        for tool_name in self.tools.names():  # a warm daemon's first call of each tool imports nothing
            self.tools.get(tool_name)
            await anyio.sleep(0)
        from .. import module_cache
        from .config_options import fetch_models

        module_cache.save()  # with the warm-up's modules: the next daemon's warm-up reads them too
        module_cache.close()  # a long-running daemon holds no descriptor of it
        await fetch_models(self)  # the model picker's list: once per daemon, in the background

    async def _warm_turn(self) -> None:
        """What a first prompt needs: the turn's modules, the tools, the provider."""
        for module in _TURN_MODULES:
            importlib.import_module(module)
            await anyio.sleep(0)
        self.tools  # noqa: B018  (built now, not in the first prompt)
        await anyio.sleep(0)
        if self.settings.mcp_servers or self.mcp_session_servers:
            # the MCP SDK (pydantic models: the biggest import), in a thread: the loop goes on
            from anyio import to_thread

            await to_thread.run_sync(importlib.import_module, "tether.mcp.registry")
        try:
            await self.provider()
        except Exception as exc:  # reported to the client when a prompt needs it
            log.debug("provider not ready yet: %s", exc)

    def stop(self, exit_code: int | None = None) -> None:
        if exit_code is not None:
            self.exit_code = exit_code
        self.stopped.set()

    async def stop_turns(self) -> None:
        turns = [s.turn for s in self.registry.live.values() if s.turn is not None]
        if turns:  # the prompts queued behind them never start: reported as not run on load
            from .queue import stop_queue

            for session in self.registry.live.values():
                stop_queue(self.registry, session, keep_rows=True)
        for turn in turns:
            turn.cancel()
        if turns:
            with anyio.move_on_after(STOP_GRACE_S):
                for turn in turns:
                    await turn.done.wait()
