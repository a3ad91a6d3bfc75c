"""What the services need of whoever calls them: the ports a client connection fills.

Owns: the `typing.Protocol`s a service names instead of the connection, one per need (writing
updates, the daemon's services, the settings, asking, the client's files and abilities);
`server.context.ClientConnection` satisfies them structurally (mypy checks each call site).
Must not: import `tether.server` or hold state (a port is a type, never an object).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..approvals import Asker

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from ..approvals import ApprovalGate
    from ..config import Settings
    from ..mcp.manager import McpManager
    from ..providers.base import Provider
    from ..providers.models_list import ModelCatalog
    from ..store import HistoryStore
    from ..tools.base import Elicit, FileIO
    from ..tools.registry import ToolRegistry
    from ..tools.sandbox import WorkspaceSandbox
    from ..transport.connection import Connection
    from ..transport.rpc import TetherRPC
    from .registry import SessionRegistry
    from .sessions_service import LiveSessions


class TaskStarter(Protocol):
    """The daemon's task group, as a service starts a background task in it."""

    def start(self, name: str, fn: Callable[..., Awaitable[Any]], *args: Any) -> bool: ...


class DaemonServices(Protocol):
    """What one daemon process has once (`server.daemon_services.Daemon`), as services use it."""

    # both made on first use by the service that needs them (config_options, mcp_servers)
    model_catalog: ModelCatalog | None
    mcp: McpManager | None

    @property
    def registry(self) -> SessionRegistry: ...
    @property
    def sessions(self) -> LiveSessions: ...
    @property
    def tasks(self) -> TaskStarter: ...
    @property
    def tools(self) -> ToolRegistry: ...


class UpdateChannel(Protocol):
    """Where a service's `session/update`s go: the connection it was called on."""

    @property
    def connection(self) -> Connection: ...


class SessionHost(UpdateChannel, Protocol):
    """A channel for updates and the daemon's services (its live sessions, its tasks)."""

    @property
    def daemon(self) -> DaemonServices: ...


# a service that hands its caller back to a callback (`prompt_keys.prompt_once`) keeps its type
HostT = TypeVar("HostT", bound=SessionHost)


class SettingsHost(Protocol):
    """The daemon's services under the caller's settings (its sandbox, its MCP servers, its model)."""

    @property
    def daemon(self) -> DaemonServices: ...
    @property
    def settings(self) -> Settings: ...


class SessionAsker(Asker, Protocol):
    """Who a turn asks (the running v2 turns it tells `requires_action`: `LiveSession.turn_sinks`)."""


class Approver(Protocol):
    """A window an open approval is asked of (its own asker, not the shared daemon's)."""

    def own_asker(self) -> Asker: ...


class OpenApproval(Protocol):
    """An approval asked of every window that sees its session until one answers (shared daemon)."""

    def add(self, viewer: Approver) -> None: ...


class AskingHost(SessionHost, Protocol):
    """A session host that can ask the user (a child session's approvals)."""

    def asker(self) -> SessionAsker: ...


class ClientAbilities(Protocol):
    """What the client declared it can do, as far as the services and the files they build read it."""

    @property
    def acp(self) -> bool: ...
    @property
    def wire_version(self) -> int: ...
    @property
    def clear_session(self) -> bool: ...
    @property
    def terminal_output_meta(self) -> bool: ...
    @property
    def elicitation_form(self) -> bool: ...
    @property
    def shows_forms(self) -> bool: ...
    @property
    def fs_read_text_file(self) -> bool: ...
    @property
    def fs_write_text_file(self) -> bool: ...
    @property
    def lsp_apply_edit(self) -> bool: ...
    @property
    def lsp_create_file(self) -> bool: ...


class OpenBuffer(Protocol):
    """One buffer the editor has open."""

    @property
    def uri(self) -> str: ...
    @property
    def version(self) -> int | None: ...
    @property
    def text(self) -> str: ...


class OpenBuffers(Protocol):
    """The editor's open buffers: their texts by path, written ahead of an edit's `didChange`."""

    texts: dict[str, str]

    def get(self, path: Path) -> OpenBuffer | None: ...


class ClientPort(AskingHost, SettingsHost, Protocol):
    """All a turn needs of its client: its abilities, buffers, peer, provider, approval gate."""

    @property
    def client(self) -> ClientAbilities | None: ...
    @property
    def documents(self) -> OpenBuffers: ...
    @property
    def rpc(self) -> TetherRPC: ...
    @property
    def stopped(self) -> asyncio.Event: ...

    async def provider(self) -> Provider: ...
    def gate_for(self, workspace: Path, store: HistoryStore) -> ApprovalGate: ...
    def editor_files(self, session_id: str, sandbox: WorkspaceSandbox) -> FileIO: ...
    def clarifier(self, session_id: str) -> Callable[[str], Awaitable[str | None]] | None: ...
    def form_relay(self, session_id: str) -> Elicit | None: ...
