"""Server: the protocol's methods, one table of typed handler functions, on top of the transport.

Owns: the method table (`methods.py`: one row per method — its handler, params class,
result class), the `ClientConnection` every handler is passed (`context.py`: one client's
state, with the `Daemon` of `daemon_services.py`: what the process has once), the live
session with what it owns (`live_session.py`) and who sees it (`audience.py`), the handlers by area — `initialize` and the LSP lifecycle (`lifecycle.py`, with
the import-free `handshake.py` the fast start also uses), sessions (`sessions.py`, over
the sessions service `sessions_service.py` that `tether sessions` uses too), loading a
stored session (`loading.py`), snapshots and forks (`snapshots.py`), prompt turns and
cancel (`prompt.py`, `turns.py`; on ACP v2 `prompt_v2.py`, sub-agents as sessions of their own
`child_sessions.py`, ask-first's form `elicitation.py`), the prompt queue and steering (`queue.py`), run reports, rules, stats and document sync — the
answer to an `initialize` read before the server stack is imported (`early.py`), the one
task group that owns the daemon's background tasks (`tasks.py`), and the typed turn
events rendered as ACP v1 `session/update`s (`updates/`), and the agent front of an
editor with only an LSP client (`lsp_agent/`: commands, code actions, the same events as
work-done progress, messages and a transcript). The start path imports only
what `initialize` and `session/new` need; the method table imports the other handlers
on first use. Must not: run
the model or tools itself (that is `tether.agent`), or touch bytes on the wire (that is
`tether.transport`).
"""
