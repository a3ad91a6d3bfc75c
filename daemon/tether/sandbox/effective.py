"""The effective sandbox as data, for `tether doctor` (and its `--json` form).

Owns: `read_facts` (the paths commands cannot read, each with why and whether it exists; the token files
shown filtered or hidden; the stores the user exposed) and `guarantees` (what each promise rests on, per
backend).
Must not: probe anything beyond `os.path.exists`, or print.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tether_protocol import JsonObject

from . import SandboxChoice
from .credential_stores import read_limits, shown_path

__all__ = ["guarantees", "read_facts"]


def read_facts(
    env: Mapping[str, str], own: Sequence[str], deny_read: Sequence[str], allow_read: Sequence[str]
) -> JsonObject:
    """`own`: Tether's private paths (config, history, runtime, caches): never exposable."""
    import os

    limits = read_limits(env, deny_read, allow_read)
    rows = [{"path": path, "shown": shown_path(path, env), "why": "Tether's own files", "exists": os.path.exists(path)}
            for path in own]
    rows += [{"path": h.path, "shown": shown_path(h.path, env), "why": h.why, "exists": os.path.lexists(h.path)}
             for h in limits.hidden]
    return {
        "hidden": rows,
        "filtered": [{"path": p, "shown": shown_path(p, env), "exists": os.path.lexists(p)} for p in limits.filtered],
        "exposed": [shown_path(p, env) for p in limits.exposed],
    }


def guarantees(choice: SandboxChoice) -> list[str]:
    """What each of the sandbox's promises rests on, for the chosen backend."""
    sandbox = choice.sandbox
    if sandbox is None:
        return ["none: commands run unconfined, and every one asks for approval first"]
    sockets = "a seccomp filter (no AF_UNIX sockets, no io_uring)"
    if sandbox.name == "bwrap":
        return [
            f"files: a bubblewrap mount namespace ({sandbox.version}): / read-only, the workspace and $TMPDIR "
            "writable, hidden paths covered by an empty tmpfs or /dev/null, token files by a filtered copy",
            "network: a network namespace with loopback only (unless a command is given the network)",
            f"sockets: {sockets}",
            "processes: a PID namespace (bwrap is PID 1; every process the command starts dies with it), "
            "all capabilities dropped",
        ]
    abi = int(getattr(sandbox, "abi", 0))
    scoped = ("signals and abstract unix sockets scoped to the sandbox (ABI 6+)" if abi >= 6 else
              "signals and abstract unix sockets not scoped (needs ABI 6)")
    return [
        f"files: Landlock {sandbox.version}: read rights for every entry except the hidden paths (and the "
        "token files, hidden whole; the names in a hidden directory stay listable, as listing its parent "
        "is), write rights in the workspace and $TMPDIR",
        f"network: Landlock TCP bind/connect rules (ABI {abi}; they need 4+)",
        f"sockets: {sockets}; {scoped}",
        "processes: a launcher that is a child subreaper and kills what the command leaves, capabilities "
        "dropped, no_new_privs",
    ]
