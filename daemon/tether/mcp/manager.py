"""The daemon's one MCP manager: every server connection, started once, stopped at exit.

Owns: the connections, keyed by their config (shared across sessions), starting a turn's in parallel within
their timeouts, stopping a session's own at its close and all at the daemon's exit, and doctor's probes.
Must not: tell the client anything (the turn's registry does) or name tools for the model.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

import anyio

from .connection import McpConnection
from .launch import LaunchSettings

if TYPE_CHECKING:
    from ..config.mcp_servers import McpServerConfig

log = logging.getLogger("tether.mcp")

StartTask = Callable[[str, Callable[[], Awaitable[Any]]], bool]
# How long a stopping daemon waits for its servers to exit (the SDK's stdio shutdown takes
# at most a few seconds: stdin closed, then SIGTERM, then SIGKILL).
STOP_WAIT_S = 8.0


class McpManager:
    def __init__(self, start_task: StartTask, launch: LaunchSettings | None = None) -> None:
        self._start_task = start_task
        self._launch = launch or LaunchSettings()
        self._connections: dict[McpServerConfig, McpConnection] = {}
        self._closed = False

    def connections(self) -> list[McpConnection]:
        return list(self._connections.values())

    async def start(self, configs: Iterable[McpServerConfig]) -> list[McpConnection]:
        """The connections of ``configs`` (enabled ones), started if they were not, once
        each has started or failed (in parallel, each within its start-up timeout)."""
        wanted = [c for c in configs if c.enabled]
        for config in wanted:
            if config not in self._connections:
                connection = McpConnection(config, self._launch)
                self._connections[config] = connection
                if self._closed or not self._start_task(f"mcp {config.name}", connection.run):
                    connection.fail("the daemon is stopping")
                    connection.started.set()
                    connection.finished.set()
        found = [self._connections[c] for c in wanted]
        async with anyio.create_task_group() as group:
            for connection in found:
                if not connection.started.is_set():
                    group.start_soon(connection.wait_started)
        return found

    async def stop_session(self, session_id: str) -> None:
        """Stop the servers an ACP client gave this session."""
        mine = [c for c in self._connections if c.session_id == session_id]
        await self._stop([self._connections.pop(c) for c in mine])

    async def aclose(self) -> None:
        self._closed = True
        await self._stop(list(self._connections.values()))

    async def _stop(self, connections: list[McpConnection]) -> None:
        for connection in connections:
            connection.stop()
        with anyio.move_on_after(STOP_WAIT_S):
            for connection in connections:
                await connection.finished.wait()
