"""Where a workspace's history database lives on disk.

Owns: the per-user data directory (``TETHER_HOME`` or the platform's), the per-workspace folder
(``<basename>-<hash of the real path>``, 0700) and the ``workspace.json`` label beside each database.
Must not: open the database or put anything inside the workspace (the history is the user's,
not the project's: docs/decisions/0015-store.md).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import time
from pathlib import Path

from tether.store.errors import StorageFault

__all__ = [
    "DATABASE_NAME",
    "HOME_ENV",
    "LABEL_NAME",
    "database_path",
    "home_of_database",
    "stored_database",
    "tether_home",
    "workspace_key",
]

HOME_ENV = "TETHER_HOME"
DATABASE_NAME = "history.sqlite3"
LABEL_NAME = "workspace.json"

# Long enough to stay readable, short enough that name + "-" + 16 hex digits
# stays far below every filesystem's 255-byte component limit.
_MAX_BASENAME = 48


def tether_home(home: Path | None = None) -> Path:
    """The root of tether's per-user data: ``home``, else $TETHER_HOME, else the OS default."""
    if home is not None:
        return Path(home).expanduser().absolute()
    env = os.environ.get(HOME_ENV)
    if env:
        # absolute() so a relative TETHER_HOME does not follow the daemon's cwd around
        return Path(env).expanduser().absolute()
    import platformdirs  # only for the OS default (not when a home is set)

    return Path(platformdirs.user_data_dir("tether", appauthor=False))


def workspace_key(workspace: Path) -> str:
    """``<basename>-<sha256(realpath)[:16]>``: the same folder for every spelling of a workspace.

    The hash is over the *real* path, so a symlink and its target share one
    history; the basename is only there so a human can recognise the folder.
    """
    real = os.path.realpath(workspace)
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
    name = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in os.path.basename(real))
    return f"{name[:_MAX_BASENAME] or 'root'}-{digest}"


def database_path(workspace: Path, home: Path | None = None) -> Path:
    """The history database for ``workspace``, creating its private folder if needed.

    Layout: ``<home>/workspaces/<workspace_key>/history.sqlite3``. Folders tether
    creates are 0o700 (conversation history can quote secrets from the code).
    """
    root = tether_home(home)
    folder = root / "workspaces" / workspace_key(workspace)
    directory = root.parent
    try:
        # The ancestors of the data dir (e.g. ~/.local/share) belong to the user's
        # desktop, so they get default permissions; everything from root down is ours.
        directory.mkdir(parents=True, exist_ok=True)
        for directory in (root, root / "workspaces", folder):
            directory.mkdir(mode=0o700, exist_ok=True)
        _write_label(folder, os.path.realpath(workspace))
    except OSError as exc:
        raise _unusable(directory, exc) from exc
    return folder / DATABASE_NAME


def home_of_database(path: Path) -> Path | None:
    """The Tether home a history database lives in (``<home>/workspaces/<key>/history.sqlite3``),
    None for a database opened elsewhere (a test's, a copy's)."""
    if path.name != DATABASE_NAME or path.parent.parent.name != "workspaces":
        return None
    return path.parent.parent.parent


def stored_database(workspace: Path, home: Path | None = None) -> Path | None:
    """The history database of ``workspace`` if it exists; never creates anything (for
    readers). A home that is not a directory is a ``StorageFault``, not "no history"."""
    root = tether_home(home)
    path = root / "workspaces" / workspace_key(workspace) / DATABASE_NAME
    for directory in (root, *path.parents[:2]):
        if directory.exists() and not directory.is_dir():
            raise _unusable(directory, NotADirectoryError(20, "Not a directory"))
    return path if path.exists() else None


def _unusable(directory: Path, exc: OSError) -> StorageFault:
    """``history directory not writable: <path> (<why>; <what to do>)``."""
    if isinstance(exc, FileExistsError) or (directory.exists() and not directory.is_dir()):
        why = "a file is in the way: it is not a directory"
    elif isinstance(exc, NotADirectoryError):
        why = "a file is in the way of one of its folders"
    else:
        why = exc.strerror or str(exc)
    fix = (
        "free some disk space"
        if exc.errno == errno.ENOSPC
        else "set TETHER_HOME (or the home setting) to a writable directory"
    )
    return StorageFault(f"history directory not writable: {directory} ({why}; {fix})", directory)


def _write_label(folder: Path, real_workspace: str) -> None:
    """Record which workspace the folder belongs to, once; the hash alone is opaque."""
    label = {"workspace": real_workspace, "created_at": time.time()}
    try:
        # "x": never rewrite an existing label, and lose no race with a second daemon
        with open(folder / LABEL_NAME, "x", encoding="utf-8") as handle:
            json.dump(label, handle, ensure_ascii=False, indent=2)
            handle.write("\n")
    except FileExistsError:
        pass
