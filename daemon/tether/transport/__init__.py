"""Transport: bytes on stdio <-> JSON-RPC messages <-> handler calls.

Owns: private protocol fds (`stdio.py`), the first message read before the loop
(`first_message.py`), batched writes and backpressure (`connection.py`), and the daemon's
end of the one JSON-RPC peer (`rpc.py`). Must not: know what a session or a turn is.
Guarantees and why the peer is Tether's own: docs/decisions/0012-transport.md.
"""
