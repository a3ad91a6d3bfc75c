"""Transport: bytes on stdio <-> JSON-RPC messages <-> handler calls.

Owns: the private protocol file descriptors (`stdio.py`), reading the client's first
message before the event loop starts (`first_message.py`), batched writes and
backpressure (`connection.py`), and the daemon's end of the one JSON-RPC peer
(`rpc.py` on top of `tether_protocol.peer`, which the Python client and the benchmarks
use too). Must not: know what a session or a turn is.

The peer is Tether's own (pygls left the runtime in issue 17: its protocol class was
subclassed with every entry point overridden, and importing it cost ~190 ms of
lsprotocol types on every start). What it guarantees, each with a regression test in
tests/transport/ or tests/protocol/test_peer.py:

- every request gets exactly one response (invalid or missing params included)
- params reach handlers as dicts or typed attrs objects, never namedtuples
- notification tasks are held while they run and dropped when they finish
- replies to requests we gave up on are ignored (counted), not reported as errors
- only a message's top level is classified: nested `"jsonrpc"` objects are data
- a handler's bug is -32603 with a log reference; the traceback goes to the log
- one write per event-loop tick; bodies are never logged above DEBUG
- stdin/stdout are moved to private fds at start, out of child processes' reach
- requests in both directions can be cancelled (`$/cancelRequest` / `$/cancel_request`)
"""
