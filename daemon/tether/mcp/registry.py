"""The tools of a turn with MCP servers: Tether's own, then each server's, kept current.

Owns: waiting at the first step for servers not up yet, re-reading a changed tool list at the next step,
leaving out disabled, broken or clashing tools (each told once), and one notice per session for a server
that failed, died or runs without an OS sandbox.
Must not: run tools or decide approvals.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, ClassVar

from ..tools.registry import ToolEntry, ToolRegistry
from .tools import make_tool, schema_problem

if TYPE_CHECKING:
    from ..config.mcp_servers import McpServerConfig
    from .connection import McpConnection
    from .manager import McpManager

Notify = Callable[[str], None]


class McpToolRegistry(ToolRegistry):
    """Tether's tools followed by the MCP servers' (rebuilt by `refresh`)."""

    changing: ClassVar[bool] = True

    def __init__(
        self,
        own: Iterable[ToolEntry],
        manager: McpManager,
        configs: tuple[McpServerConfig, ...],
        notify: Notify,
        told: set[str],
        on_ready: Callable[[list[McpConnection]], None] | None = None,
    ) -> None:
        self._own = list(own)
        super().__init__(self._own)
        self._manager, self._configs, self._notify = manager, configs, notify
        self._told = told  # what this session was told already (kept across its turns)
        self._on_ready = on_ready  # told the ready servers when they change (their prompts)
        self._seen: tuple[tuple[int, int], ...] | None = None

    async def refresh(self) -> bool:
        """Start what is not started, re-read stale tool lists; whether the tools changed."""
        connections = await self._manager.start(self._configs)
        for connection in connections:
            if connection.ready and connection.tools_stale:
                await connection.relist()
        for connection in connections:
            if not connection.ready:
                self._tell_once(f"failed {connection.config}", _failed_text(connection))
            elif connection.unconfined:
                self._tell_once(
                    f"unconfined {connection.config.name}",
                    (
                        f"MCP server {connection.config.name} runs without an OS sandbox ({connection.unconfined}): "
                        f"it can read and write what you can; it still starts in its own directory with the "
                        f"minimal environment plus its `env`"
                    ),
                )
        seen = tuple((id(c), c.generation if c.ready else -1) for c in connections)
        if seen == self._seen:
            return False
        self._seen = seen
        ready = [c for c in connections if c.ready]
        self._rebuild(ready)
        if self._on_ready is not None:
            self._on_ready(ready)
        return True

    def _rebuild(self, connections: list[McpConnection]) -> None:
        tools: dict[str, ToolEntry] = {tool.name: tool for tool in self._own}
        for connection in connections:
            config = connection.config
            for server_tool in connection.tools:
                if not config.offers(server_tool.name):
                    continue
                problem = schema_problem(server_tool.input_schema)
                if problem:
                    self._tell_once(
                        f"schema {config.name} {server_tool.name}",
                        f"MCP server {config.name}: tool {server_tool.name} is not offered to the model: {problem}",
                    )
                    continue
                tool = make_tool(connection, server_tool)
                if tool.name in tools:
                    self._tell_once(
                        f"clash {tool.name}",
                        f"MCP server {config.name}: tool {server_tool.name} is not offered: another tool is "
                        f"already named {tool.name}",
                    )
                    continue
                tools[tool.name] = tool
        self._tools = tools

    def _tell_once(self, key: str, text: str) -> None:
        if key not in self._told:
            self._told.add(key)
            self._notify(text)


def _failed_text(connection: McpConnection) -> str:
    config = connection.config
    return (
        f"MCP server {config.describe()} is not available: {connection.error or connection.state}. "
        f"The turn goes on without its tools; `tether doctor` checks the configured servers"
    )
