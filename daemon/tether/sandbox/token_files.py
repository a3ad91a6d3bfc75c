"""Filtered copies of token files (`~/.npmrc`, `~/.pypirc`, pip.conf, yarnrc) for bubblewrap.

Owns: which lines hold a credential (a key naming auth, token, password or secret, or a URL with a user in
it) and a private, daemon-owned copy of each file without them, rewritten when the file changes.
Must not: write anywhere but its own 0700 directory, or follow the copy's contents back.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import shutil
import tempfile
import threading

__all__ = ["filtered_copy", "without_credentials"]

_SECRET_LINE = re.compile(r"auth|token|passw|secret|credential|api[_-]?key", re.I)
# any user part: package indexes take a token alone as the user (`https://TOKEN@pypi.fury.io/`)
_URL_USER = re.compile(r"://[^/\s@]+@")
REMOVED = "# [removed by Tether's sandbox: this line holds a credential]"
_MAX_BYTES = 1 << 20  # a token file is a few lines; a bigger one is shown as removed whole

_lock = threading.Lock()
_dir: list[str] = []


def without_credentials(text: str) -> str:
    """`text` with every line that may hold a credential replaced by a `REMOVED` comment
    (comments themselves are kept: they are not read as settings)."""
    lines = text.splitlines()
    kept: list[str] = []
    removing = False  # an INI value continued on indented lines (`password =` then `    s3cret`)
    for line in lines:
        continued = removing and line[:1].isspace() and bool(line.strip())
        removing = continued or _holds_credential(line)
        kept.append(REMOVED if removing else line)
    return "\n".join(kept) + ("\n" if text.endswith("\n") else "")


def _holds_credential(line: str) -> bool:
    """The key (before `=`; the whole line without one: YAML, yarnrc v1) names a credential,
    or the line holds a URL with a password; comments are not settings."""
    if line.lstrip().startswith(("#", ";")):
        return False
    key = line.split("=", 1)[0]
    return bool(_SECRET_LINE.search(key) or _URL_USER.search(line))


def _own_dir() -> str:
    with _lock:
        if not _dir:
            made = tempfile.mkdtemp(prefix="tether-token-files-")  # 0700
            atexit.register(shutil.rmtree, made, True)
            _dir.append(made)
        return _dir[0]


def filtered_copy(path: str) -> str | None:
    """The path of a filtered copy of the regular file at `path` (resolved), or None when
    there is no such file. Rewritten only when the file's size, mtime or inode changed."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not os.path.isfile(path):
        return None
    stamp = f"{info.st_ino}-{info.st_size}-{info.st_mtime_ns}"
    name = hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:24]
    copy = os.path.join(_own_dir(), f"{name}-{stamp}")
    if os.path.exists(copy):
        return copy
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_BYTES + 1)
    except OSError:
        data = b""
    text = REMOVED + "\n" if len(data) > _MAX_BYTES else without_credentials(data.decode("utf-8", "replace"))
    partial = copy + ".part"
    with open(partial, "w", encoding="utf-8") as out:
        out.write(text)
    os.chmod(partial, 0o444)
    os.replace(partial, copy)
    return copy
