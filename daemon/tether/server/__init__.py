"""Server: the protocol's methods, one module per area, on top of the transport.

Owns: `initialize` and the LSP lifecycle (`lifecycle.py`, with the import-free
`handshake.py` the fast start also uses), sessions (`sessions.py`), prompt turns and
cancel (`prompt.py`), run reports (`reports.py`), and the ACP update emitter
(`updates.py`). Must not: run the model or tools itself (that is `tether.agent`), or
touch bytes on the wire (that is `tether.transport`).
"""
