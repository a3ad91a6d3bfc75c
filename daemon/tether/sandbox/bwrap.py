"""The bubblewrap backend: namespaces for mounts, PIDs, network and IPC, one per command.

Owns: finding and probing `bwrap` once, and the command line for a policy: the filesystem read-only but the
workspace and a private temp dir, `.git` and `.tether/` read-only, Tether's files and the credential stores
covered, every namespace unshared, no capabilities, the seccomp socket filter (SPEC §5.13, decision 0003).
Must not: pass the daemon's environment (the caller starts bwrap with the command's).
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

from . import CommandSandbox, SandboxPolicy

if TYPE_CHECKING:
    from collections.abc import Sequence

_PROBE_TIMEOUT = 5.0
_BRIDGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "netproxy", "bridge.py")


class BwrapSandbox(CommandSandbox):
    name = "bwrap"

    def __init__(self, path: str, version: str) -> None:
        self.path = path
        self.version = version

    def wrap(self, argv: Sequence[str], policy: SandboxPolicy, seccomp_fd: int | None = None) -> list[str]:
        """The bwrap command line; `seccomp_fd`: an fd the process inherits holding the
        socket filter (see `prepare`, which run_command uses)."""
        line = [self.path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        if policy.tmpdir is not None:
            line += ["--bind", policy.tmpdir, policy.tmpdir]
        line += ["--bind" if policy.writable else "--ro-bind", policy.workspace, policy.workspace]
        for path in policy.extra_writable:
            line += ["--bind-try", path, path]
        if policy.writable:
            # The whole `.git` (a directory, or a worktree's/submodule's `.git` file):
            # binding only hooks/ and config lets `commondir` or a copied `.git` around
            # them; a mount point can be neither renamed (EBUSY) nor written (EROFS).
            for kept in _git_entries(policy.workspace) + _tether_dir(policy.workspace):
                line += ["--ro-bind", kept, kept]
        # last, so a hidden path inside the workspace stays hidden too
        hidden = _real_hidden(policy)
        if policy.network:
            line += _named_sockets(policy.unix_sockets, hidden)
        filtered = _filtered_copies(policy)
        if policy.writable:
            line += _pin_parents(policy.workspace, hidden + list(filtered))
        for path in hidden:
            if path not in filtered:
                line += ["--tmpfs", path] if os.path.isdir(path) else ["--ro-bind", "/dev/null", path]
        for path, copy in filtered.items():
            line += ["--ro-bind", copy, path]
        if policy.proxy_socket is not None:  # after the hidden paths: it lives in one
            line += ["--bind", policy.proxy_socket, policy.proxy_socket]
            if policy.proxy_bundle is not None:
                line += ["--ro-bind", policy.proxy_bundle, policy.proxy_bundle]
        line += ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        if policy.network:
            line.append("--share-net")
        if seccomp_fd is not None:
            line += ["--seccomp", str(seccomp_fd)]
        line += ["--chdir", policy.cwd, "--"]
        return line + list(argv)

    def prepare(self, argv: Sequence[str], policy: SandboxPolicy) -> tuple[list[str], list[int]]:
        """`wrap`, with the socket filter (seccomp.py) in a pipe: no unix sockets, unless the
        command has the network and the user named sockets (`allow_unix_sockets`; seccomp
        cannot tell one path from another: Tether's runtime directory stays hidden)."""
        if policy.network and policy.unix_sockets:
            return self.wrap(argv, policy), []
        from .seccomp import socket_filter

        # AF_INET stays either way: without the network, the namespace has loopback only
        program = socket_filter(inet_stream_only=False)
        if policy.proxy_socket is not None and not policy.network:
            # the bridge installs the filter in the command's process, after it has its
            # own listening socket and before the command runs (netproxy/bridge.py)
            bridge = [
                sys.executable,
                "-I",
                "-S",
                _BRIDGE,
                policy.proxy_socket,
                program.hex(),
                *([policy.proxy_bundle] if policy.proxy_bundle else []),
                "--",
            ]
            return self.wrap([*bridge, *argv], policy), []
        read, write = os.pipe()
        try:
            os.write(write, program)  # a few hundred bytes: far below a pipe's buffer
        except OSError:
            os.close(read)
            raise
        finally:
            os.close(write)
        return self.wrap(argv, policy, seccomp_fd=read), [read]


def _real_hidden(policy: SandboxPolicy) -> list[str]:
    """The hidden paths that exist, resolved, without those inside another one and those
    holding the workspace (they cannot be covered without covering it)."""
    found: list[str] = []
    for path in policy.hidden:
        real = os.path.realpath(path)
        if os.path.exists(real) and not _inside(policy.workspace, real) and real not in found:
            found.append(real)
    return [path for path in found if not any(other != path and _inside(path, other) for other in found)]


def _filtered_copies(policy: SandboxPolicy) -> dict[str, str]:
    """Each token file that exists, resolved, with the filtered copy bound over it; none
    inside a hidden directory (covered already) or holding the workspace."""
    from .token_files import filtered_copy

    found: dict[str, str] = {}
    hidden = [os.path.realpath(path) for path in policy.hidden]
    for path in policy.filtered:
        real = os.path.realpath(path)
        if real in found or any(other != real and _inside(real, other) for other in hidden):
            continue
        copy = filtered_copy(real) if not _inside(policy.workspace, real) else None
        if copy is not None:
            found[real] = copy
    return found


def _named_sockets(sockets: Sequence[str], hidden: list[str]) -> list[str]:
    """The sockets the user named, bound where a fresh /dev or a covered directory would
    have lost them; never one inside a hidden path (Tether's own sockets stay out)."""
    line: list[str] = []
    for path in sockets:
        real = os.path.realpath(path)
        if os.path.exists(real) and not any(_inside(real, other) for other in hidden):
            line += ["--bind-try", real, path]
    return line


def _pin_parents(workspace: str, hidden: list[str]) -> list[str]:
    """For hidden paths inside the writable workspace: each directory between the
    workspace and them read-only (renaming one would move the hidden path away and let a
    new one be made in its place), then every other entry of those directories bound
    writable again (symbolic links stay as they are, in a read-only directory). Landlock
    grants the same."""
    parents: set[str] = set()
    for path in hidden:
        if _inside(path, workspace) and path != workspace:
            up = os.path.dirname(path)
            while up != workspace and _inside(up, workspace):
                parents.add(up)
                up = os.path.dirname(up)
    keep = parents | set(hidden)
    line: list[str] = []
    for directory in sorted(parents, key=lambda path: path.count("/")):  # outer ones first
        line += ["--ro-bind", directory, directory]
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            path = os.path.join(directory, name)
            if path not in keep and not os.path.islink(path):
                line += ["--bind-try", path, path]  # -try: it may be gone by then
    return line


def _git_entries(workspace: str) -> list[str]:
    """The workspace's `.git`, and each submodule's (from `.gitmodules`): a rewritten
    submodule `.git` file points git at a planted config whose `core.fsmonitor` runs at
    the user's next `git status` in the workspace. With each, the git directory it names
    (a link's target, a `gitdir:` file's directory, a worktree's `commondir`) when that is
    in the workspace: hooks and config live there. Read cheaply: no walk of the tree."""
    from tether.tools.git_objects import git_dir_at

    found: list[str] = []
    for rel in _submodule_paths(workspace):
        top = os.path.normpath(os.path.join(workspace, rel))
        git = os.path.join(top, ".git")
        if not _inside(git, workspace) or not os.path.lexists(git):
            continue
        named = git_dir_at(top)
        candidates = [git] if not os.path.islink(git) else []
        candidates += [named.git_dir, named.common_dir] if named is not None else []
        for path in candidates:
            real = path if path == git else os.path.realpath(path)  # the workspace is real already
            if _inside(real, workspace) and real != workspace and os.path.exists(real) and real not in found:
                found.append(real)
    return found


def _submodule_paths(workspace: str) -> list[str]:
    from tether.tools.regular_files import open_regular

    paths = ["."]
    try:  # a FIFO a command planted as `.gitmodules` must not block the next command's set-up
        with open_regular(os.path.join(workspace, ".gitmodules")) as handle:
            for line in handle.read(1 << 20).decode("utf-8", "replace").splitlines():
                key, _, value = line.strip().partition("=")
                if key.strip() == "path" and value.strip():
                    paths.append(value.strip())
    except OSError:
        pass
    return paths


def _tether_dir(workspace: str) -> list[str]:
    """The workspace's `.tether/` (its config, trusted hooks, MEMORY.md), resolved, when it
    is a directory in the workspace: a command must not rewrite what the user trusted."""
    path = os.path.join(workspace, ".tether")
    real = os.path.realpath(path) if os.path.islink(path) else path
    return [real] if _inside(real, workspace) and real != workspace and os.path.isdir(real) else []


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def probe_bwrap() -> tuple[BwrapSandbox | None, str]:
    """bwrap if it is installed and can create its namespaces here, with the reason."""
    from tether.sandbox.host_path import host_program

    path = host_program("bwrap")  # never a relative PATH entry: the cwd may be the repository
    if path is None:
        return None, "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    line = [
        path,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--",
        "/bin/true",
    ]
    try:
        # stdin from /dev/null: in `tether run` the process's stdin is the user's terminal
        done = subprocess.run(
            line, stdin=subprocess.DEVNULL, capture_output=True, timeout=_PROBE_TIMEOUT, env={"PATH": "/usr/bin:/bin"}
        )
        version = subprocess.run(
            [path, "--version"], stdin=subprocess.DEVNULL, capture_output=True, timeout=_PROBE_TIMEOUT, text=True
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"bubblewrap ({path}) cannot run: {error}"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = said[-1] if said else f"exit status {done.returncode}"
        return None, f"bubblewrap ({path}) cannot create its namespaces here ({why}; user namespaces disabled?)"
    shown = version.stdout.strip() or "bubblewrap"
    return BwrapSandbox(path, shown), f"{shown} at {path}"
