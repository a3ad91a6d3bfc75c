"""`tether doctor`'s MCP lines: each configured server started (with its start-up
timeout, all in parallel), its tools counted, then stopped.

Owns: the probe and its report rows. Must not: keep a server running, or start a server
the user's config did not name (`.mcp.json` is only listed, `offered.py`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from tether_protocol._json import JsonObject

from ..config.mcp_servers import McpServerConfig
from .manager import McpManager


async def _run(fn: Callable[[], Awaitable[Any]]) -> None:
    await fn()


async def probe(configs: tuple[McpServerConfig, ...], env_allow: tuple[str, ...] = ()) -> list[JsonObject]:
    rows: list[JsonObject] = []
    async with anyio.create_task_group() as group:
        def start(name: str, fn: Callable[[], Awaitable[Any]]) -> bool:
            group.start_soon(_run, fn, name=name)
            return True

        manager = McpManager(start, env_allow)
        connections = {c.config: c for c in await manager.start(configs)}
        for config in configs:
            row: JsonObject = {"name": config.name, "what": config.describe(), "source": config.source}
            connection = connections.get(config)
            if connection is None:
                row.update(started=False, error="disabled (enabled = false)")
            elif connection.ready:
                row.update(started=True, tools=[t.name for t in connection.tools if config.offers(t.name)])
            else:
                row.update(started=False, error=connection.error or connection.state)
            rows.append(row)
        await manager.aclose()
    return rows
