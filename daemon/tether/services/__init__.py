"""Services: what the daemon does with live and stored sessions, whichever method asked.

Owns: live sessions and their registry, turns, the prompt queue, rewind, slash commands, child
sessions, a session's MCP servers and config options, and the sessions service (docs/decisions/0019).
Must not: import a handler, or the connection layer (`tether.server`: a service names the port it
needs, `ports.py`; 0019 names the turn builder's two edges left), or render the wire (`rendering/`).
"""
