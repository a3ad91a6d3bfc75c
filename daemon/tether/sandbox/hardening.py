"""Hardening the daemon's own process at start (Linux; a no-op elsewhere).

Owns: making the daemon non-dumpable (`PR_SET_DUMPABLE` 0: processes of the same user
cannot read its `/proc/PID/environ` or memory, nor ptrace it), no core files
(`RLIMIT_CORE` 0: a crash cannot write the API key to disk), and removing dynamic-loader
variables (`LD_PRELOAD`, `LD_AUDIT`, `LD_LIBRARY_PATH`, ...) from its environment so no
process it starts inherits an injected library.
Must not: fail the start (each step is best effort), or import more than `os` and ctypes.
"""

from __future__ import annotations

import os
import sys

_PR_SET_DUMPABLE = 4
_LOADER_PREFIXES = ("LD_", "DYLD_")


def harden_process() -> list[str]:
    """Apply what this platform allows; return what could not be done (for the log)."""
    missed: list[str] = []
    for name in [key for key in os.environ if key.startswith(_LOADER_PREFIXES)]:
        os.environ.pop(name, None)
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, ValueError, OSError) as error:
        missed.append(f"RLIMIT_CORE: {error}")
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(_PR_SET_DUMPABLE, ctypes.c_ulong(0), 0, 0, 0) != 0:
                missed.append(f"PR_SET_DUMPABLE: {os.strerror(ctypes.get_errno())}")
        except OSError as error:
            missed.append(f"PR_SET_DUMPABLE: {error}")
    return missed
