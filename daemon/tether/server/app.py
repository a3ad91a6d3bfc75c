"""The daemon: one connection, one method table, the sessions behind it.

Owns: `TetherServer` (state shared by the handler modules), the route table assembled
from those modules (a storage fault in any of them answered as `-32015`), and `serve()`,
which runs until stdin closes or `exit` arrives and then stops every turn cleanly.
Must not: implement a method itself.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from pathlib import Path
from typing import Any

import anyio

from tether_protocol._errors import StorageFailed

from ..config import Settings
from ..providers.base import Provider
from ..providers.select import make_provider
from ..approvals import ApprovalGate
from ..sandbox import set_default_setting
from ..store import StorageFault
from ..tools.mutating import default_mutating_tools
from ..tools.registry import ToolRegistry, default_read_only_tools
from ..tools.run_command import RunCommandTool
from ..tools.update_plan import UpdatePlanTool
from ..transport.connection import Connection
from ..transport.rpc import Route, TetherRPC
from ..transport.stdio import ProtocolFds
from . import diagnostics, documents, lifecycle, prompt, reports, rules, sessions, snapshots
from .documents import DocumentStore
from .permission import ClientAsker
from .handshake import ClientProfile
from .registry import SessionRegistry

log = logging.getLogger("tether.server")

# How long a stopping daemon waits for cancelled turns to commit what they have.
_STOP_GRACE_S = 5.0


def storage_faults_answered(route: Route) -> Route:
    """``route`` with a history that cannot be read or written (a full disk, a file that is
    not a database, an unusable TETHER_HOME) answered as `-32015` with the store's message,
    which says what to do: it is not a bug of Tether's, so not `-32603`."""
    handler = route.handler

    async def answered(params: Any) -> Any:
        try:
            return await handler(params)
        except StorageFault as exc:
            log.warning("%s: %s", route.method, exc)
            raise StorageFailed(str(exc), data={"path": exc.path}) from exc

    return dataclasses.replace(route, handler=answered)


class TetherServer:
    def __init__(self, settings: Settings, root: Path) -> None:
        self.settings = settings
        self.default_root = root
        # grep's rg has no settings of its own: it runs in the sandbox the user chose
        set_default_setting(settings.sandbox)
        self.client: ClientProfile | None = None
        self.initialized = False
        # the workspace config's refused keys were shown in a turn (once per daemon)
        self.told_refused = False
        self.shutdown_requested = False
        self.exit_code = 0
        self.stopped = asyncio.Event()
        self.conn: Connection | None = None
        self.tools = ToolRegistry(
            [*default_read_only_tools(), UpdatePlanTool(), *default_mutating_tools(), RunCommandTool()]
        )
        self.documents = DocumentStore()
        self._gates: dict[Path, ApprovalGate] = {}
        self.registry = SessionRegistry(Path(settings.home) if settings.home else None)
        self._provider: Provider | None = None
        self._provider_lock = anyio.Lock()
        self._asker: ClientAsker | None = None
        self._background: set[asyncio.Task[None]] = set()
        routes: dict[str, Route] = {}
        for module in (lifecycle, sessions, prompt, reports, rules, documents, diagnostics, snapshots):
            for route in module.routes(self):
                routes[route.method] = storage_faults_answered(route)
        self.rpc = TetherRPC(routes)

    async def provider(self) -> Provider:
        """The provider, chosen on first use (choosing may probe loopback servers)."""
        if self._provider is None:
            async with self._provider_lock:
                if self._provider is None:
                    self._provider = await make_provider(self.settings)
        return self._provider

    def gate_for(self, workspace: Path, store: object) -> ApprovalGate:
        """The approval gate of a workspace (its rules live in that workspace's store)."""
        gate = self._gates.get(workspace)
        if gate is None:
            gate = ApprovalGate(
                store.rules,  # type: ignore[attr-defined]
                self.settings.deny_commands,
                network_commands=self.settings.network_commands,
                network_all=self.settings.network == "on",
            )
            self._gates[workspace] = gate
        return gate

    def asker(self) -> ClientAsker:
        if self._asker is None:
            self._asker = ClientAsker(self.rpc, self.client)
        return self._asker

    def accept_client(self, profile: ClientProfile, settings: Settings) -> None:
        self.client = profile
        self.settings = settings
        self.initialized = True
        self.rpc.acp_peer = profile.acp
        if profile.root is not None:
            self.default_root = profile.root
        # Build the provider now, not on the first prompt: creating an HTTP client loads
        # the CA bundle (~50 ms) and may probe loopback servers. Errors wait for the prompt.
        self._warm = asyncio.get_running_loop().create_task(self._warm_provider())

    async def _warm_provider(self) -> None:
        try:
            await self.provider()
        except Exception as exc:  # reported to the client when a prompt needs it
            log.debug("provider not ready yet: %s", exc)

    def resume_waiting(self, session: object, turn_id: str, pending: dict) -> None:
        from .prompt import resume_turn

        task = asyncio.get_running_loop().create_task(resume_turn(self, session, turn_id, pending))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def stop(self, exit_code: int | None = None) -> None:
        if exit_code is not None:
            self.exit_code = exit_code
        self.stopped.set()

    async def stop_turns(self) -> None:
        turns = [s.turn for s in self.registry.live.values() if s.turn is not None]
        for turn in turns:
            turn.cancel()
        if turns:
            with anyio.move_on_after(_STOP_GRACE_S):
                for turn in turns:
                    await turn.done.wait()


async def serve(
    fds: ProtocolFds,
    settings: Settings,
    root: Path,
    *,
    framing: str | None = None,
    accepted: tuple[ClientProfile, Settings] | None = None,
    leftover: bytes = b"",
) -> int:
    server = TetherServer(settings, root)
    if accepted is not None:
        server.accept_client(*accepted)
    conn = Connection(
        fds.read_fd,
        fds.write_fd,
        server.rpc.handle_message,
        server.stop,
        framing,  # type: ignore[arg-type]
    )
    server.conn = conn
    server.rpc.attach(conn)
    await conn.start(leftover)
    await server.stopped.wait()
    server.rpc.shutting_down = True
    await server.stop_turns()
    await server.rpc.wait_idle(_STOP_GRACE_S)
    server.rpc.cancel_all()
    await asyncio.sleep(0)
    try:
        await asyncio.wait_for(conn.drain(), 2.0)
    except (asyncio.TimeoutError, OSError):
        pass
    await server.registry.close_all()
    if server._provider is not None:
        await server._provider.aclose()
    conn.close()
    return server.exit_code
