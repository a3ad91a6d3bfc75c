"""`tether doctor`'s MCP lines: each configured server started (with its start-up
timeout, all in parallel), its tools counted, then stopped.

Owns: the probe and its report rows. Must not: keep a server running, or start a server
the user's config did not name (`.mcp.json` is only listed, `offered.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

import anyio

from .manager import McpManager

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ..config.mcp_servers import McpServerConfig
    from .launch import LaunchSettings


class ProbeRow(TypedDict):
    """One configured server as `tether doctor` shows it (and prints with --json)."""

    name: str
    what: str
    source: str
    started: bool
    tools: NotRequired[list[str]]  # when started: the tools it offers the model
    error: NotRequired[str]  # when not: why


async def _run(fn: Callable[[], Awaitable[Any]]) -> None:
    await fn()


async def probe(configs: tuple[McpServerConfig, ...], launch: LaunchSettings) -> list[ProbeRow]:
    rows: list[ProbeRow] = []
    async with anyio.create_task_group() as group:

        def start(name: str, fn: Callable[[], Awaitable[Any]]) -> bool:
            group.start_soon(_run, fn, name=name)
            return True

        manager = McpManager(start, launch)
        connections = {c.config: c for c in await manager.start(configs)}
        for config in configs:
            row = ProbeRow(name=config.name, what=config.describe(), source=config.source, started=False)
            connection = connections.get(config)
            if connection is None:
                row["error"] = "disabled (enabled = false)"
            elif connection.ready:
                row["started"] = True
                row["tools"] = [t.name for t in connection.tools if config.offers(t.name)]
            else:
                row["error"] = connection.error or connection.state
            rows.append(row)
        await manager.aclose()
    return rows
