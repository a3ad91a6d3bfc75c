"""The exceptions the history store raises (their tree: the comment above ``StoreError``).

Owns: ``StoreError`` and its kinds: every failure that crosses the store's API is one, with what
the user must do in its message (``fault_of`` reads SQLite's), so callers never import sqlite3.
Must not: carry protocol error codes; the server layer maps these to JSON-RPC.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

__all__ = ["InvalidCursor", "StorageFault", "StoreError", "TurnElsewhere", "TurnWaiting", "fault_of"]


# The tree; what the user must act on, and how, is in each message:
#     StoreError            the history database could not do what was asked
#     ├── StorageFault      the disk, the file or the folder: not a database, damaged,
#     │                     read-only, full, a history directory that cannot be created
#     ├── InvalidCursor     a ``list_sessions`` cursor that no listing returned
#     ├── TurnElsewhere     a turn of the session runs in another live daemon
#     └── TurnWaiting       a turn of the session waits for an approval nothing asks now


class StoreError(Exception):
    """The history database could not do what was asked; the message says why."""


class StorageFault(StoreError):
    """The history cannot be read or written for a reason outside Tether: the file is not
    a database or is damaged, it or its folder is read-only, the disk is full, the history
    directory cannot be created. Nothing already committed is lost by one."""

    def __init__(self, message: str, path: Path | str) -> None:
        super().__init__(message)
        self.path = str(path)


class InvalidCursor(StoreError):
    """A ``list_sessions`` cursor that is not one a listing returned."""


class TurnElsewhere(StoreError):
    """The session has a turn running (or waiting for approval) in another live daemon:
    a second turn would interleave its messages with that one's."""

    def __init__(self, session_id: str, turn_id: str, pid: str) -> None:
        super().__init__(f"session {session_id!r} has a turn running in another Tether process (pid {pid})")
        self.session_id, self.turn_id, self.pid = session_id, turn_id, pid


class TurnWaiting(StoreError):
    """The session has a turn waiting for an approval that no daemon is asking now (the
    one that asked stopped, or a write failed): a new turn would leave that one's calls
    unanswered in the middle of the conversation."""

    def __init__(self, session_id: str, turn_id: str) -> None:
        super().__init__(
            f"session {session_id!r} has a turn left waiting for approval that no Tether "
            f"process is asking about now (turn {turn_id})"
        )
        self.session_id, self.turn_id = session_id, turn_id


# SQLite's own words for each fault (the start of its message), and what to do about it
_HINTS: tuple[tuple[str, str], ...] = (
    (
        "file is not a database",
        "the workspace's history is not a SQLite database; move the file aside and Tether starts a new history",
    ),
    (
        "database disk image is malformed",
        "the workspace's history is damaged, e.g. truncated; move the "
        "file aside and Tether starts a new history, or recover what it can with `sqlite3 FILE .recover`",
    ),
    ("database or disk is full", "free some disk space; what was stored before is kept"),
    ("attempt to write a readonly database", "make the file and its folder writable"),
    ("unable to open database file", "check that the file's folder exists and is writable"),
    ("disk i/o error", "the disk failed to read or write the file"),
    ("database is locked", "another process holds the database's write lock; try again"),
)


def fault_of(exc: sqlite3.Error, path: Path | str) -> StoreError:
    """The ``StoreError`` for a sqlite3 error on ``path``: a ``StorageFault`` (``<what
    SQLite said>: <path> (<what to do>)``) when the file, the folder or the disk is at
    fault; a plain ``StoreError`` for a misuse of SQLite (a bug in Tether)."""
    text = str(exc)
    bug = isinstance(
        exc,
        (
            sqlite3.IntegrityError,
            sqlite3.ProgrammingError,
            sqlite3.InterfaceError,
            sqlite3.NotSupportedError,
            sqlite3.InternalError,
        ),
    )
    if bug:
        return StoreError(f"history database {path}: {text}")
    hint = next((h for start, h in _HINTS if text.lower().startswith(start)), None)
    folder = Path(path).parent
    if text.startswith("unable to open") and folder.is_dir() and not os.access(folder, os.W_OK):
        hint = f"its folder {folder} is read-only (SQLite writes its journal beside it); make it writable"
    return StorageFault(f"{text}: {path}" + (f" ({hint})" if hint else ""), path)
