"""Handlers: the protocol's method families, one module each, as the method table registers them.

Owns: decoding each method's params into a call on the services, and its answer or error
(`-32602` naming the bad field); `lsp_agent/` is the stock LSP client's front (docs/decisions/0019).
Must not: hold a session's state (`tether.services`) or build `session/update`s (`tether.rendering`).
"""
