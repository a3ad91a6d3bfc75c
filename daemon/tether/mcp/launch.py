"""How a stdio MCP server's process is started: where, with what, and confined how.

Owns: its own directory (private cwd, HOME, TMPDIR unless `cwd`), its command found without relative or
workspace PATH entries, its environment (commands' minimal one plus its `env`), and the commands' sandbox.
Must not: start the process (the SDK's stdio transport does) or decide approvals.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass

from ..config.layers import servers_dir
from ..config.mcp_servers import WORKSPACE, McpServerConfig
from ..sandbox import SandboxPolicy, choose_sandbox
from ..tools.subprocess_env import command_env

__all__ = ["Launch", "LaunchRefused", "LaunchSettings", "plan_launch"]


class LaunchRefused(Exception):
    """The server is not started; the message says why and what to change."""


@dataclass(frozen=True, slots=True)
class LaunchSettings:
    """What the user's settings say about every stdio server."""

    env_allow: tuple[str, ...] = ()  # `allow_env`
    hidden: tuple[str, ...] = ()  # Tether's config and history
    sandbox: str = "auto"  # the `sandbox` setting


@dataclass(frozen=True, slots=True)
class Launch:
    command: str
    args: list[str]
    env: dict[str, str]
    cwd: str
    unconfined: str = ""  # why it runs without an OS sandbox ("" when it has one)


def plan_launch(config: McpServerConfig, settings: LaunchSettings) -> Launch:
    """The process of a stdio server; LaunchRefused when it must not start."""
    own = _own_directory(config)
    workspace = os.path.realpath(config.workspace) if config.workspace else ""
    trusts_workspace = config.cwd == WORKSPACE
    if trusts_workspace and not workspace:
        raise LaunchRefused('cwd = "workspace" but it has no workspace here (tether doctor starts it in none)')
    cwd = workspace if trusts_workspace else config.cwd or own
    search = os.environ.get("PATH", "") if trusts_workspace else _outside_path(os.environ.get("PATH", ""), workspace)
    program = _find(config.command, cwd, search)
    if workspace and not trusts_workspace and _inside(os.path.realpath(program), workspace):
        raise LaunchRefused(
            f"its command {program} is inside the workspace {workspace}: a repository's own programs "
            f'run only for a server whose config says cwd = "workspace"'
        )
    tmp = os.path.join(own, "tmp")
    env = command_env(settings.env_allow, tmp) | {"PATH": search, "HOME": os.path.join(own, "home")}
    env |= dict(config.env)
    choice = choose_sandbox(settings.sandbox)
    if choice.sandbox is None:
        return Launch(program, list(config.args), env, cwd, unconfined=choice.reason)
    writable = tuple(path for path in config.writable if path != WORKSPACE)
    policy = SandboxPolicy(
        workspace=workspace or own,
        tmpdir=tmp,
        cwd=cwd,
        writable=WORKSPACE in config.writable or not workspace,
        network=config.network,
        hidden=_hidden_from_server(settings.hidden, own),
        extra_writable=(own, *writable),
    )
    line = choice.sandbox.wrap([program, *config.args], policy)
    if choice.sandbox.name == "bwrap":  # no unix sockets, as for commands (Landlock's wrap adds it)
        line = _with_socket_filter(line)
    return Launch(line[0], line[1:], env, cwd)


def _own_directory(config: McpServerConfig) -> str:
    """The server's private directory (made 0700, kept across starts: npx's cache lives in
    its HOME), one per server name and client session."""
    key = hashlib.sha256(f"{config.name}\0{config.session_id}".encode()).hexdigest()[:12]
    own = os.path.join(servers_dir(), f"{config.name}-{key}")
    for sub in ("home", "tmp"):
        os.makedirs(os.path.join(own, sub), mode=0o700, exist_ok=True)
    return own


def _hidden_from_server(hidden: tuple[str, ...], own: str) -> tuple[str, ...]:
    """Tether's hidden paths but those holding the server's own directory (the servers'
    directories are hidden from commands: a command must not plant code a server runs)."""
    return tuple(path for path in hidden if not _inside(own, os.path.realpath(path)))


def _outside_path(path: str, workspace: str) -> str:
    """PATH without relative entries (`.`, `node_modules/.bin`: they follow the cwd) and
    without entries inside the workspace."""
    kept = [
        entry
        for entry in path.split(os.pathsep)
        if os.path.isabs(entry) and not (workspace and _inside(os.path.realpath(entry), workspace))
    ]
    return os.pathsep.join(kept) or "/usr/local/bin:/usr/bin:/bin"


def _find(command: str, cwd: str, search: str) -> str:
    command = os.path.expanduser(command)
    if "/" in command:
        program = os.path.normpath(os.path.join(cwd, command))
        if not os.access(program, os.X_OK) or os.path.isdir(program):
            raise LaunchRefused(f"its command {program} is not an executable file")
        return program
    found = shutil.which(command, path=search)
    if found is None:
        raise LaunchRefused(
            f"its command {command!r} was not found on PATH (relative PATH entries and those inside "
            f"the workspace are not searched; give an absolute path)"
        )
    return os.path.abspath(found)


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


_filter_file: list[str] = []


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _with_socket_filter(line: list[str]) -> list[str]:
    """bwrap reads its seccomp filter from an fd the SDK cannot pass: a shell opens the
    daemon's own copy of the filter (no AF_UNIX sockets; AF_INET stays: without the
    network the namespace has loopback only) on fd 3, then runs bwrap."""
    if not _filter_file:
        from ..sandbox.seccomp import socket_filter

        handle, path = tempfile.mkstemp(prefix="tether-mcp-seccomp-")
        with os.fdopen(handle, "wb") as out:
            out.write(socket_filter(inet_stream_only=False))
        atexit.register(_remove, path)
        _filter_file.append(path)
    at = line.index("--chdir")
    bwrap = [*line[:at], "--seccomp", "3", *line[at:]]
    return ["/bin/sh", "-c", 'f=$1; shift; exec "$@" 3<"$f"', "sh", _filter_file[0], *bwrap]
