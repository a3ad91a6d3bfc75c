"""The Landlock backend (Linux >= 5.13, no extra binary), used where bubblewrap is not.

Owns: reading the kernel's Landlock ABI once, and the command line that runs an argv through the launcher
(landlock_launch.py under `python -I -S`) with the seccomp socket filter passed in hex, or unconfined.
Must not: apply Landlock to the daemon itself (only the launcher confines itself).
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import TYPE_CHECKING

from . import CommandSandbox, SandboxPolicy

if TYPE_CHECKING:
    from collections.abc import Sequence

_LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "landlock_launch.py")
_SYS_CREATE_RULESET = 444
# TCP connect/bind rules came with ABI 4; without them "no network" cannot be enforced.
_NET_ABI = 4


class LandlockSandbox(CommandSandbox):
    name = "landlock"

    def __init__(self, abi: int) -> None:
        self.abi = abi
        self.version = f"ABI {abi}"

    def wrap(self, argv: Sequence[str], policy: SandboxPolicy) -> list[str]:
        line = [sys.executable, "-I", "-S", _LAUNCHER]
        if policy.writable:
            line += ["--write", policy.workspace]
        if policy.tmpdir is not None:
            line += ["--write", policy.tmpdir]
        for path in policy.extra_writable:
            line += ["--write", path]
        # A store holding the workspace stays readable, as under bubblewrap (the user opened
        # it); a token file is hidden whole (Landlock cannot show a filtered copy).
        for hidden in dict.fromkeys((*policy.hidden, *policy.filtered)):
            if not _holds(hidden, policy.workspace):
                line += ["--hide", hidden]
        if policy.network:
            line.append("--net")
        # Landlock rights do not cover connect() on a unix socket, not even in a hidden
        # directory, and seccomp cannot tell one socket path from another: AF_UNIX stays
        # refused here, with the network and whatever `allow_unix_sockets` names.
        line += ["--seccomp", _socket_filter(inet_stream_only=not policy.network)]
        return [*line, "--", *argv]


def unconfined(argv: Sequence[str]) -> list[str]:
    """`argv` run by the launcher with no confinement (the sandbox is off): a subreaper whose
    clean-up kills what the command left, `setsid` and double-forked children too, which
    the daemon's kill of the process group would miss."""
    return [sys.executable, "-I", "-S", _LAUNCHER, "--unconfined", "--", *argv]


def _holds(path: str, workspace: str) -> bool:
    real = os.path.realpath(path)
    return workspace == real or workspace.startswith(real.rstrip("/") + "/")


_filters: dict[bool, str] = {}


def _socket_filter(inet_stream_only: bool) -> str:
    """The seccomp socket filter (seccomp.py) in hex, built once per kind: the launcher
    takes it on its command line instead of compiling seccomp.py for every command."""
    if inet_stream_only not in _filters:
        from .seccomp import socket_filter

        _filters[inet_stream_only] = socket_filter(inet_stream_only=inet_stream_only).hex()
    return _filters[inet_stream_only]


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return 0
    libc.syscall.restype = ctypes.c_long
    return max(0, int(libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))))


def probe_landlock() -> tuple[LandlockSandbox | None, str]:
    abi = landlock_abi()
    if abi == 0:
        return None, "Landlock is not available (Linux 5.13+ with landlock in the LSM list)"
    if abi < _NET_ABI:
        return None, f"Landlock ABI {abi} cannot block the network (needs ABI {_NET_ABI}, Linux 6.7+)"
    if not os.path.isfile(_LAUNCHER):
        return None, f"the Landlock launcher {_LAUNCHER} is missing"
    return LandlockSandbox(abi), f"Landlock ABI {abi} (bubblewrap unavailable or not chosen)"
