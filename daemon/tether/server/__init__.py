"""Server: the connection and dispatch layer, between the transport and the handlers.

Owns: the method table (`methods.py`), the `Daemon` (`daemon_services.py`), a `ClientConnection`
(`context.py`: its handshake, asker, documents, files) and serving it (`app.py`; docs/decisions/0019).
Must not: implement a method (`tether.handlers`), keep a session's state (`tether.services`), or
touch bytes on the wire (`tether.transport`); the start path imports only what it needs.
"""
