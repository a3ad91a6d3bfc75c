"""Tether: a coding-agent daemon that editors talk to over JSON-RPC on stdio.

Where things live (each package's docstring says what it owns and must not do):

- `transport/`  bytes <-> frames <-> JSON-RPC messages (the one peer); the first message
- `server/`     one module per protocol area (lifecycle, sessions, prompt, reports) and
                the ACP `session/update` emitter
- `agent/`      the agent loop: a turn's steps, tool dispatch, run reports, replay
- `tools/`      the workspace tools and the sandbox every path goes through
- `providers/`  model providers behind one streaming interface (`scripted` today)
- `store/`      the per-workspace SQLite history
- `config/`     settings and their precedence
- `cli.py`      `tether serve | acp | run | demo`
"""

__version__ = "0.1.0"
