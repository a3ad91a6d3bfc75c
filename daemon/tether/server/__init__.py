"""Server: the protocol's methods, one table of typed handler functions, on top of the transport.

Owns: the method table (`methods.py`), the `ClientConnection` handlers are given (`context.py`), the
live sessions, the handlers by area, and `updates/` and `lsp_agent/` (the map: docs/decisions/0018).
Must not: run the model or tools itself (`tether.agent`), or touch bytes on the wire
(`tether.transport`); the start path imports only what `initialize` and `session/new` need.
"""
