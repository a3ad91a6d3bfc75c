"""The one exception type the history store raises.

Owns: ``StoreError``. Every failure that crosses the store's public API (a
sqlite3 error, an unknown session or turn, a database written by a newer tether)
surfaces as this type, so callers never need to import ``sqlite3``.
Must not: carry protocol error codes; the server layer maps it to JSON-RPC.
"""

from __future__ import annotations

__all__ = ["StoreError"]


class StoreError(Exception):
    """The history database could not do what was asked; the message says why."""
