"""The bubblewrap backend (Debian `bubblewrap`): namespaces for mounts, PIDs, network, IPC.

Owns: finding and probing `bwrap` once, and the command line for a policy: the whole
filesystem read-only (the host's /tmp included: a venv or a tool may live there), a fresh
/dev and /proc, the private temp dir writable at its own path ($TMPDIR), the workspace
writable (or not) with its `.git/hooks` and `.git/config` kept read-only (a planted hook
would run outside the sandbox at the user's next commit), Tether's own config and history
covered, every namespace unshared (the network only shared when allowed), all
capabilities dropped, a new session, and bwrap dying with the daemon. bwrap is PID 1 of
the command's PID namespace: when the command ends, every process it started (`setsid`
ones too) is killed by the kernel.
Must not: pass the daemon's environment (the caller starts bwrap with the command's
environment, which is also what `/proc/1/environ` shows inside).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence

from . import CommandSandbox, SandboxPolicy

_PROBE_TIMEOUT = 5.0


class BwrapSandbox(CommandSandbox):
    name = "bwrap"

    def __init__(self, path: str, version: str) -> None:
        self.path = path
        self.version = version

    def wrap(self, argv: Sequence[str], policy: SandboxPolicy) -> list[str]:
        line = [self.path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        if policy.tmpdir is not None:
            line += ["--bind", policy.tmpdir, policy.tmpdir]
        line += ["--bind" if policy.writable else "--ro-bind", policy.workspace, policy.workspace]
        if policy.writable:
            for name in (".git/hooks", ".git/config"):
                path = os.path.join(policy.workspace, name)
                if os.path.exists(path) and not os.path.islink(path):
                    line += ["--ro-bind", path, path]
        # last, so a hidden directory inside the workspace stays hidden too
        for hidden in policy.hidden:
            if os.path.isdir(hidden) and not _inside(policy.workspace, hidden):
                line += ["--tmpfs", hidden]
        line += ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        if policy.network:
            line.append("--share-net")
        line += ["--chdir", policy.cwd, "--"]
        return line + list(argv)


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def probe_bwrap() -> tuple[BwrapSandbox | None, str]:
    """bwrap if it is installed and can create its namespaces here, with the reason."""
    path = shutil.which("bwrap")
    if path is None:
        return None, "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    line = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--", "/bin/true"]
    try:
        done = subprocess.run(line, capture_output=True, timeout=_PROBE_TIMEOUT, env={"PATH": "/usr/bin:/bin"})
        version = subprocess.run([path, "--version"], capture_output=True, timeout=_PROBE_TIMEOUT, text=True)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"bubblewrap ({path}) cannot run: {error}"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = said[-1] if said else f"exit status {done.returncode}"
        return None, f"bubblewrap ({path}) cannot create its namespaces here ({why}; user namespaces disabled?)"
    shown = version.stdout.strip() or "bubblewrap"
    return BwrapSandbox(path, shown), f"{shown} at {path}"
