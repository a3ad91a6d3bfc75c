"""Which MCP servers a session has, and the tools its turns see.

Owns: reading a client's `mcpServers` (-32602 naming the wrong entry), a session's servers (user
config's enabled ones, then the client's), the daemon's one `McpManager`, a turn's tool registry,
and stopping a closed session's servers.
Must not: import `tether.mcp` (the SDK) at import time, or for a session without servers.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from tether_protocol import InvalidParams, JsonObject

from . import mcp_prompts

if TYPE_CHECKING:
    from pathlib import Path

    from ..agent.sink import TurnSink
    from ..config.mcp_servers import McpServerConfig
    from ..mcp.connection import McpConnection
    from ..mcp.manager import McpManager
    from ..tools.registry import ToolRegistry
    from .ports import SettingsHost


def check_acp_servers(method: str, entries: list[JsonObject]) -> tuple[McpServerConfig, ...]:
    """A client's `mcpServers`, checked before anything is made (-32602 naming the entry)."""
    if not entries:
        return ()  # most clients send none: their reading is not imported
    from ..config.mcp_servers import from_acp

    try:
        return from_acp(entries, "params.mcpServers", "", remote_ok=True)
    except ValueError as exc:
        raise InvalidParams(f"invalid params for {method}: {exc}") from None


def keep_acp_servers(
    ctx: SettingsHost, method: str, session_id: str, workspace: Path, configs: tuple[McpServerConfig, ...]
) -> None:
    """Keep the servers a client gave a session (replacing what it gave before); they
    start with `start_in_background`. A stdio server is confined as the
    user's are (launch.py: its own directory, never run from the workspace)."""
    live = ctx.daemon.registry.live.get(session_id)
    if not configs or live is None:
        return
    live.mcp_servers = tuple(
        replace(
            c,
            session_id=session_id,
            source=f"{method} of session {session_id}",
            workspace=str(workspace) if c.transport == "stdio" else "",
        )
        for c in configs
    )


def session_servers(ctx: SettingsHost, session_id: str) -> tuple[McpServerConfig, ...]:
    """The enabled servers of a session: the user's, then the ones its client gave (a
    client's server named like one of the user's replaces it for this session). A user's
    stdio server is one per workspace: it is told the workspace it must not run from."""
    live = ctx.daemon.registry.live.get(session_id)
    given = live.mcp_servers if live is not None else ()
    names = {c.name for c in given}
    workspace = str(live.sandbox.root) if live is not None else ""
    return (
        tuple(
            replace(c, workspace=workspace) if c.transport == "stdio" else c
            for c in ctx.settings.mcp_servers
            if c.enabled and c.name not in names
        )
        + given
    )


def start_in_background(ctx: SettingsHost, session_id: str) -> None:
    """Start the session's servers now, in the daemon's task group: the opening answer does
    not wait (a hung server holds nothing), and the first turn waits only for the servers
    that are not up yet (`McpManager.start` shares the connections). Their failures are
    told by the turn that needs them."""
    servers = session_servers(ctx, session_id)
    if not servers:
        return  # no server: nothing of the MCP SDK is imported

    async def start() -> None:
        import anyio

        await anyio.sleep(0)  # the opening answer goes out before the SDK is imported
        await manager(ctx).start(servers)

    ctx.daemon.tasks.start(f"mcp servers of {session_id}", start)


def servers_report(ctx: SettingsHost, session_id: str) -> str:
    """`/mcp`: each of the session's servers, its state and the tools it offers."""
    servers = session_servers(ctx, session_id)
    if not servers:
        return (
            "[/mcp: this session has no MCP servers; add them under [mcp_servers.<name>] in your user "
            "config, or have your editor pass them in `mcpServers`]"
        )
    known = {c.config: c for c in ctx.daemon.mcp.connections()} if ctx.daemon.mcp is not None else {}
    lines = ["[/mcp: the MCP servers of this session]"]
    for config in servers:
        connection = known.get(config)
        if connection is None:
            lines.append(f"{config.describe()}: not started")
            continue
        state = f"failed: {connection.error}" if connection.state == "failed" else connection.state
        lines.append(f"{config.describe()}: {state}")
        if connection.ready:
            offered = [t.name for t in connection.tools if config.offers(t.name)]
            lines.append("  tools: " + (", ".join(offered) if offered else "(none)"))
    return "\n".join(lines)


def manager(ctx: SettingsHost) -> McpManager:
    if ctx.daemon.mcp is None:
        from ..mcp.launch import LaunchSettings
        from ..mcp.manager import McpManager
        from .turns import hidden_paths

        launch = LaunchSettings(ctx.settings.allow_env, hidden_paths(ctx), ctx.settings.sandbox)
        ctx.daemon.mcp = McpManager(ctx.daemon.tasks.start, launch)
    return ctx.daemon.mcp


def turn_tools(ctx: SettingsHost, session_id: str, sink: TurnSink, own: ToolRegistry) -> ToolRegistry:
    """The tools of a turn: Tether's (`own`), and the session's MCP servers' (started at its
    first step) when it has any."""
    servers = session_servers(ctx, session_id)
    if not servers:
        return own
    from ..agent.sink import Notice
    from ..mcp.registry import McpToolRegistry

    def notify(text: str) -> None:
        sink.emit(Notice(f"\n[{text}]\n"))

    def ready(connections: list[McpConnection]) -> None:
        mcp_prompts.record(ctx.daemon.registry.live.get(session_id), connections)  # its prompts: slash commands

    live = ctx.daemon.registry.live.get(session_id)
    told = live.mcp_told if live is not None else set()  # a sub-agent's: told per turn
    return McpToolRegistry(own, manager(ctx), servers, notify, told, ready)


async def session_closed(ctx: SettingsHost, session_id: str) -> None:
    """A closed session's servers stop (what it was given and told went with its `LiveSession`)."""
    if ctx.daemon.mcp is not None:
        await ctx.daemon.mcp.stop_session(session_id)
