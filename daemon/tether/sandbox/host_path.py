"""Where Tether finds the programs it starts on the host itself: `bwrap`, `git`, `rg`.

Owns: `host_program`, a PATH lookup that leaves out relative entries (they follow the daemon's cwd, the
workspace, so a repository's own `bwrap` or `git` would run unconfined).
Must not: start anything, or search a directory the PATH does not name absolutely.
"""

from __future__ import annotations

import os
import shutil

__all__ = ["host_program"]


def host_program(name: str) -> str | None:
    """The absolute path of `name` on the daemon's PATH (absolute entries only), or None."""
    entries = [entry for entry in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(entry)]
    return shutil.which(name, path=os.pathsep.join(entries)) if entries else None
