"""Tether: a coding-agent daemon that editors talk to over JSON-RPC on stdio.

Where things live (each package's docstring says what it owns and must not do):

- `transport/`  bytes <-> frames <-> JSON-RPC messages (the one peer); the first message
- `server/`     the connection and dispatch layer: the method table, the `Daemon`
                (daemon_services.py: sessions, stores, provider, tools, MCP, tasks) and a
                `ClientConnection` (context.py: one client's peer, settings, documents, asker)
- `handlers/`   the protocol's method families, one module each, and the LSP agent front
- `services/`   what is done to sessions: a `LiveSession` (queue, MCP servers, audience),
                turns, rewind, slash commands, the sessions service; they take the ports
                of ports.py (a connection fills them), not `server/` (decision 0019)
- `rendering/`  the ACP v1/v2 `session/update` renderers, the emitter, the replays
- `shared/`     the shared per-user daemon: the same `Daemon`, one connection per window
- `agent/`      a turn: step runner, tool executor, journal, and the loop over them
- `hooks/`      the user's hooks, the reviewer and ask-first: the turn's hook port
- `tools/`      the workspace tools and the sandbox every path goes through
- `providers/`  model providers behind one streaming interface (OpenAI-compatible,
                Anthropic, scripted, record/replay)
- `store/`      the per-workspace SQLite history
- `config/`     settings and their precedence
- `daemon_start.py`  the settings' flags, a daemon's start, and `tether serve | acp` on stdio
- `daemon_log.py`  the daemon's log on stderr (`tether serve`: started once `initialize` is answered)
- `__main__.py`  `python -m tether`: hands the command line to `tether_cli`

The command line is its own package (`cli/tether_cli`), over the daemon and the clients;
the daemon imports neither, but for `__main__.py`'s one import of the CLI.
"""

__version__ = "0.1.0"
