"""The OS sandbox that commands run in (`run_command`, and `rg` for grep), and the daemon's own hardening.

Owns: `SandboxPolicy` (what a command may write, reach and read), choosing a backend once per process
(bubblewrap, else Landlock, else none with the reason), and the command line that runs an argv inside it.
Must not: decide whether a command may run or gets the network (the approval gate does), import anything
heavy, or run a command unconfined when the chosen backend fails. Why: docs/decisions/0003-sandbox.md.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "CommandSandbox",
    "SandboxChoice",
    "SandboxPolicy",
    "choose_sandbox",
]


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """What one sandboxed command may do."""

    workspace: str  # absolute, real path
    tmpdir: str | None  # the private temp dir (writable, $TMPDIR); None: none
    cwd: str  # absolute: inside the workspace, or an MCP server's own directory
    writable: bool = True  # the workspace (False: read-only mode, and rg)
    network: bool = False
    # Paths commands must not read (Tether's config directory or file, and its history):
    # bubblewrap covers a directory with an empty tmpfs and a file with /dev/null; Landlock
    # grants no rights there, not even inside a writable workspace.
    hidden: tuple[str, ...] = ()
    # Token files (`~/.npmrc`, ...: credential_stores.py) a command may read without their
    # credential lines: bubblewrap binds a filtered copy over each (token_files.py), even
    # when it is also in `hidden`; Landlock cannot replace a file, so it hides them whole.
    filtered: tuple[str, ...] = ()
    # Unix sockets the user named (`allow_unix_sockets`) that a command with the network
    # may connect to. Without one, AF_UNIX sockets are refused, with the network too.
    unix_sockets: tuple[str, ...] = ()
    # Further writable paths (an MCP server's own directory and the paths its config
    # lists); a missing one is skipped. Hidden paths stay hidden inside them.
    extra_writable: tuple[str, ...] = ()
    # `network = "allowlist"` (bubblewrap only): the proxy's unix socket, in a hidden
    # runtime directory; bound into the sandbox for netproxy/bridge.py, the command's only
    # way out (the network stays unshared)
    proxy_socket: str | None = None
    # with it, the trust bundle holding the daemon's CA (HTTPS credentials), bound read-only
    proxy_bundle: str | None = None


class CommandSandbox:
    """A backend: turns an argv into one that runs it confined by a policy."""

    name: str = ""
    version: str = ""  # "bubblewrap 0.8.0", "ABI 7"

    def wrap(self, argv: Sequence[str], policy: SandboxPolicy) -> list[str]:
        raise NotImplementedError

    def prepare(self, argv: Sequence[str], policy: SandboxPolicy) -> tuple[list[str], list[int]]:
        """`wrap`, and the file descriptors the process must inherit (`pass_fds`); the
        caller closes them once it is started. Commands are started this way."""
        return self.wrap(argv, policy), []

    def describe(self) -> str:
        return f"{self.name} ({self.version})" if self.version else self.name

    # Where a blocked command sees its failure: what the model is told is allowed.
    def allowed_text(self, policy: SandboxPolicy) -> str:
        write = "the workspace and $TMPDIR" if policy.writable else "nothing (read-only)"
        if policy.proxy_socket is not None:
            net = "no network but Tether's proxy to allowed_domains (HTTP_PROXY is set)"
        elif not policy.network:
            net = "no network (nor unix sockets)"
        elif policy.unix_sockets and self.name == "bwrap":
            net = "the network, and the unix sockets named in allow_unix_sockets"
        else:
            net = "the network but no unix sockets (name one in allow_unix_sockets in your user config)"
        return f"it may write to {write}, and has {net}"


@dataclass(frozen=True, slots=True)
class SandboxChoice:
    """The backend commands use, or None with the reason none can be applied."""

    sandbox: CommandSandbox | None
    reason: str  # why this backend, or why none

    @property
    def sandboxed(self) -> bool:
        return self.sandbox is not None


_lock = threading.Lock()
_chosen: dict[str, SandboxChoice] = {}


def choose_sandbox(setting: str = "auto") -> SandboxChoice:
    """The backend for `setting` ("auto" | "bwrap" | "landlock" | "off"), probed once."""
    with _lock:
        choice = _chosen.get(setting)
        if choice is None:
            choice = _chosen[setting] = _probe(setting)
        return choice


def _probe(setting: str) -> SandboxChoice:
    import sys

    if setting == "off":
        return SandboxChoice(None, 'the sandbox setting is "off" (user configuration)')
    if not sys.platform.startswith("linux"):
        return SandboxChoice(None, f"no OS sandbox on {sys.platform} yet (Linux only: bubblewrap or Landlock)")
    from .bwrap import probe_bwrap
    from .landlock import probe_landlock

    reasons: list[str] = []
    if setting in ("auto", "bwrap"):
        found, why = probe_bwrap()
        if found is not None:
            return SandboxChoice(found, why)
        reasons.append(why)
    if setting in ("auto", "landlock"):
        landlock, why = probe_landlock()
        if landlock is not None:
            return SandboxChoice(landlock, why if not reasons else f"{why}; {reasons[0]}")
        reasons.append(why)
    return SandboxChoice(None, "; ".join(reasons))
