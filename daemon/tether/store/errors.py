"""The one exception type the history store raises.

Owns: ``StoreError``. Every failure that crosses the store's public API (a
sqlite3 error, an unknown session or turn, a database written by a newer tether)
surfaces as this type, so callers never need to import ``sqlite3``.
Must not: carry protocol error codes; the server layer maps it to JSON-RPC.
"""

from __future__ import annotations

__all__ = ["StoreError", "TurnElsewhere"]


class StoreError(Exception):
    """The history database could not do what was asked; the message says why."""


class TurnElsewhere(StoreError):
    """The session has a turn running (or waiting for approval) in another live daemon:
    a second turn would interleave its messages with that one's."""

    def __init__(self, session_id: str, turn_id: str, pid: str) -> None:
        super().__init__(f"session {session_id!r} has a turn running in another Tether process (pid {pid})")
        self.session_id, self.turn_id, self.pid = session_id, turn_id, pid
