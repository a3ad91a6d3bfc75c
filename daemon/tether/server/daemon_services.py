"""What one daemon process has once, whichever connections (one, or one per window) it serves.

Owns: `Daemon` — the settings it started with, the live sessions and their stores, the provider,
the model catalog, the tools, the approval gates, the MCP manager, the background tasks and the
connections it serves — and `LazyProvider`. Must not: hold a connection's state or a session's
(`context.ClientConnection`, `live_session.LiveSession` do), or import the per-connection module.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import anyio

from ..services.registry import SessionRegistry, credential_stores
from ..services.sessions_service import LiveSessions
from .tasks import BackgroundTasks

if TYPE_CHECKING:  # the turn's services are imported when a turn first needs them
    from collections.abc import AsyncIterator, Awaitable, Callable

    from ..approvals import ApprovalGate
    from ..approvals.gate import WorkspaceRules
    from ..config import Settings
    from ..handlers.lsp_agent.front import LspFront
    from ..mcp.manager import McpManager
    from ..providers.base import Provider
    from ..providers.models_list import ModelCatalog
    from ..store import HistoryStore
    from ..tools.registry import ToolRegistry
    from ..transport.connection import Connection
    from .asker import ClientAsker

# How long a stopping daemon waits for cancelled turns to commit what they have.
STOP_GRACE_S = 5.0
# What decides who answers: a connection whose settings differ here gets its own provider.
# What a workspace's gate is made with: connections whose settings differ here get gates of
# their own (sharing the workspace's stored rules), one connection's never decides another's.
GATE_KEYS = ("deny_commands", "network_commands", "network", "sandbox_auto_allow", "allowed_domains")
PROVIDER_KEYS = (
    "provider",
    "model",
    "base_url",
    "api_key",
    "script",
    "record",
    "cassette",
    "max_retries",
    "context_window",
    "max_output_tokens",
)


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


class Served(Protocol):
    """What the daemon knows of a connection it serves (`context.ClientConnection`)."""

    lsp_front: LspFront | None

    def own_asker(self) -> ClientAsker: ...

    def stop(self, exit_code: int | None = None) -> None: ...


class Daemon:
    """The services of one daemon process; every connection's handlers reach them."""

    def __init__(self, settings: Settings, *, shared: bool = False) -> None:
        self.settings = settings
        # many windows (the shared daemon): a window's end stops only the turns nobody
        # else sees, and approvals are asked of every window that sees the session
        self.shared = shared
        self.tasks = BackgroundTasks()
        # when a workspace's watch may start (the stdio daemon: once its client is idle)
        self.watch_after: Callable[[], Awaitable[bool]] | None = None
        self.registry = SessionRegistry(
            Path(settings.home) if settings.home else None,
            self.tasks.start,
            self._watch_when,
            credential_stores(settings),
        )
        self.sessions = LiveSessions(self.registry)
        self.lazy_provider = LazyProvider()
        # the provider's models for the model picker, once listed (config_options.fetch_models)
        self.model_catalog: ModelCatalog | None = None
        self._tools: ToolRegistry | None = None
        self._gates: dict[tuple[Path, tuple[object, ...]], ApprovalGate] = {}
        self._rules: dict[Path, WorkspaceRules] = {}  # the stored rules each workspace's gates share
        # MCP servers' processes and connections (server/mcp_servers.py), made by the first
        # session with servers
        self.mcp: McpManager | None = None
        self.connections: dict[Connection, Served] = {}

    async def _watch_when(self) -> bool:
        return await self.watch_after() if self.watch_after is not None else True

    @property
    def tools(self) -> ToolRegistry:
        """The tools a turn may call (built on first use: a session is opened without them)."""
        if self._tools is None:
            from ..tools.registry import ToolRegistry, builtin_tools

            self._tools = ToolRegistry(builtin_tools())
        return self._tools

    async def provider(self, settings: Settings) -> Provider:
        """The daemon's provider, chosen on first use (choosing may probe loopback servers)
        with the settings of the connection that first needs it (`answers_for` them)."""
        return await self.lazy_provider.get(settings)

    def answers_for(self, settings: Settings) -> bool:
        """Whether the daemon's provider answers a connection with ``settings``."""
        return all(getattr(settings, k) == getattr(self.settings, k) for k in PROVIDER_KEYS)

    def gate_for(self, workspace: Path, store: HistoryStore, settings: Settings) -> ApprovalGate:
        """The approval gate of a workspace (its rules live in that workspace's store) for a
        connection with ``settings``: one per workspace and `GATE_KEYS` values."""
        key = (workspace, tuple(getattr(settings, k) for k in GATE_KEYS))
        gate = self._gates.get(key)
        if gate is None:
            from ..approvals import ApprovalGate
            from ..approvals.gate import WorkspaceRules

            gate = ApprovalGate(
                store.rules,
                settings.deny_commands,
                network_commands=settings.network_commands,
                network_all=settings.network == "on",
                network_proxy=settings.network == "allowlist",
                workspace=workspace,
                sandbox_auto_allow=settings.sandbox_auto_allow == "on",
                allowed_domains=settings.allowed_domains,
                shared=self._rules.setdefault(workspace, WorkspaceRules()),
            )
            self._gates[key] = gate
        return gate

    @property
    def busy(self) -> bool:
        return bool(self.connections) or any(s.turn is not None for s in self.registry.live.values())

    async def stop_turns(self) -> None:
        """Every turn is cancelled and gets ``STOP_GRACE_S`` to commit what it has; the
        prompts queued behind them never start (reported as not run on load)."""
        turns = [s.turn for s in self.registry.live.values() if s.turn is not None]
        if turns:
            from ..services.queue import stop_queue

            for session in self.registry.live.values():
                stop_queue(self.registry, session, keep_rows=True)
        for turn in turns:
            turn.cancel()
        if turns:
            with anyio.move_on_after(STOP_GRACE_S):
                for turn in turns:
                    await turn.done.wait()

    @asynccontextmanager
    async def lifetime(self, tasks_grace: float) -> AsyncIterator[Daemon]:
        """While this block runs, the daemon's background tasks run in its task group
        (those started before it wait for it). On the way out the watchers stop, and the
        tasks get ``tasks_grace`` seconds to finish before what still runs is cancelled."""
        async with self.tasks.running(tasks_grace):
            try:
                yield self
            finally:
                self.registry.stop_watchers()

    async def close(self) -> None:
        """The daemon's end: its stores, its MCP servers (no process outlives the daemon)
        and its provider close."""
        await self.registry.close_all()
        if self.mcp is not None:
            await self.mcp.aclose()
        await self.lazy_provider.aclose()
