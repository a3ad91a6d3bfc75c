"""MCP (Model Context Protocol) servers as tools, through the official Python SDK (`mcp`).

Owns: the connections to MCP servers (`connection.py`: one task per server, started with a
timeout, stopped cleanly; `launch.py`: where and how a stdio server's process runs),
the daemon's one `McpManager` over them (`manager.py`), the
servers' tools as Tether tools named `mcp__<server>__<tool>` (`tools.py`: schemas,
timeouts, output caps, results as ACP content) and the registry a turn sees them in
(`registry.py`: refreshed at each step, so `notifications/tools/list_changed` lands at the
next one), `tether doctor`'s check of each configured server (`probe.py`), and the
workspace `.mcp.json` that is offered, never started (`offered.py`).
Must not: be imported on the start path (the SDK costs tens of milliseconds: only a
session with servers loads it), decide approvals (the gate does), take a server from a
workspace file, or give a server the daemon's environment (commands' minimal one, plus
the server's own `env`).
"""
