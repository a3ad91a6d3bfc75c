"""Transport: bytes on stdio <-> JSON-RPC messages <-> handler calls.

Owns: the private protocol file descriptors (`stdio.py`), framing detection, batched
writes and backpressure (`connection.py`), JSON-RPC dispatch with its guarantees
(`rpc.py`), and the fast start that answers `initialize` while the rest of the daemon
is still importing (`bootstrap.py`). Must not: know what a session or a turn is.

pygls 2.1.1 is the JSON-RPC base (`rpc.TetherRPC` subclasses its `JsonRPCProtocol`). We
pin it exactly and replace the parts that misbehave in a long-running daemon; each has a
regression test in tests/transport/:

- no response for invalid or missing params      -> every request gets exactly one response
- untyped params turned into namedtuples          -> handlers get dicts / typed attrs objects
- futures of async notification handlers leaked   -> tasks are dropped when they finish
- late replies become `window/showMessage` errors -> replies to requests we gave up on are ignored
- nested objects with a "jsonrpc" key break       -> only the top-level object is classified
- internal errors shown to the user + traceback   -> -32603 with a log reference; traceback to the log
- one write and flush per frame                   -> one write per event-loop tick
- every body logged at INFO                       -> bodies are never logged above DEBUG
- stdin/stdout shared with child processes        -> the protocol moves to private fds at start
"""
