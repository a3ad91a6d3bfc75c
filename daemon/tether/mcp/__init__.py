"""MCP (Model Context Protocol) servers as tools, through the official Python SDK (`mcp`; SPEC §5.22).

Owns: the server connections and the daemon's one `McpManager`, the servers' tools as `mcp__<server>__<tool>`,
the registry a turn sees them in, doctor's probe, and the workspace `.mcp.json` offered, never started.
Must not: be imported on the start path (the SDK costs tens of ms), decide approvals, take a server from a
workspace file, or give a server the daemon's environment. Why: docs/decisions/0008-mcp.md.
"""
