"""Hardening the daemon's own process at start (Linux; a no-op elsewhere).

Owns: making the daemon non-dumpable, no core files, removing dynamic-loader variables from its environment,
and hiding secret-looking variables from `/proc/PID/environ` while `os.environ` keeps them (decision 0003).
Must not: fail the start (each step is best effort), or import more than `os`, ctypes and `subprocess_env`.
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
    if sys.platform.startswith("linux"):
        try:
            _hide_secrets()
        except (OSError, ValueError, IndexError) as error:
            missed.append(f"hiding secrets from /proc/PID/environ: {error}")
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


def _hide_secrets() -> None:
    """Secret-looking variables out of the C environment, then zeroed in the exec'd block
    `/proc/PID/environ` reads (from `env_start` to `env_end` in `/proc/self/stat`)."""
    import ctypes

    from ..tools.subprocess_env import is_secret

    secrets = {os.fsencode(name) for name in os.environ if is_secret(name)}
    if not secrets:
        return
    for name in secrets:
        os.unsetenv(name)  # the C environment only: os.environ keeps its copy
    with open("/proc/self/stat", "rb") as handle:
        fields = handle.read().rpartition(b")")[2].split()
    start, end = int(fields[47]), int(fields[48])  # fields 50 and 51: env_start, env_end
    with open("/proc/self/environ", "rb") as handle:
        shown = handle.read()
    if end <= start or ctypes.string_at(start, end - start) != shown:
        raise ValueError("the environment block is not where /proc/self/stat says")
    offset = 0
    for entry in shown.split(b"\0"):
        if entry.partition(b"=")[0] in secrets:
            ctypes.memset(start + offset, 0, len(entry))  # no pointer of libc's left on it
        offset += len(entry) + 1
