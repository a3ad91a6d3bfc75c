"""Recognising a command that failed because the sandbox blocked it.

Owns: the output patterns that usually mean "the sandbox said no", the line told to the model (what was
blocked, what is allowed, what the user can do), and `hidden_hint` for a path the sandbox hides.
Must not: claim certainty (it says "probably"), or change the command's status.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from . import CommandSandbox, SandboxPolicy

_NETWORK = re.compile(
    r"Network is unreachable|Temporary failure in name resolution|Could not resolve host"
    r"|Name or service not known|getaddrinfo|ENOTFOUND|EAI_AGAIN|nodename nor servname"
    r"|Failed to establish a new connection|Connection refused|Permission denied \(connect\)"
    r"|socket\.gaierror|No address associated with hostname",
    re.I,
)
_GIT = re.compile(r"\.git\b")
_TETHER = re.compile(r"\.tether\b")
_FILES = re.compile(r"Read-only file system|Permission denied|Operation not permitted|EROFS|EACCES|EPERM", re.I)


def blocked_hint(output: str, sandbox: CommandSandbox, policy: SandboxPolicy) -> str:
    """A line for the model when `output` looks like the sandbox blocked the command."""
    network = not policy.network and bool(_NETWORK.search(output))
    files = bool(_FILES.search(output))
    if not network and not files:
        return ""
    if network and not files:
        what = "the network"
    elif policy.network:
        what = "a write outside the allowed places, or a unix socket"
    else:  # Landlock refuses a TCP connect with the same EACCES as a write
        what = "a write outside the allowed places, or the network"
    text = (
        f"[sandbox: this command ran in an OS sandbox ({sandbox.name}) that probably blocked {what}: "
        f"{sandbox.allowed_text(policy)}; processes outside it cannot be seen or signalled."
    )
    if not policy.network:
        text += (
            ' If it needs the network, ask the user to approve it with "Allow once, with network" '
            "or to add it to `network_commands` in their Tether config."
        )
    if files:
        text += " Write inside the workspace or $TMPDIR instead."
    if files and sandbox.name == "bwrap" and policy.writable and _GIT.search(output):
        text += (
            " `.git` is read-only in the sandbox (a hook or git setting planted there would run "
            "outside it): git commands that write (commit, add, checkout, ...) fail; ask the user "
            "to run them."
        )
    if files and sandbox.name == "bwrap" and policy.writable and _TETHER.search(output):
        text += (
            " `.tether/` (this workspace's Tether config, hooks and memory) is read-only in the sandbox: "
            "ask the user to change it."
        )
    return text + "]"


def hidden_hint(
    command: str, output: str, sandbox: CommandSandbox, policy: SandboxPolicy, env: Mapping[str, str]
) -> str:
    """A line for the model when `command` or `output` names a hidden path: which one, why
    it is hidden, and that only the user can expose it (`allow_read`)."""
    from .credential_stores import default_stores, shown_path

    home = (env.get("HOME") or "").rstrip("/")
    named: list[str] = []
    for path in dict.fromkeys((*policy.hidden, *policy.filtered)):
        if policy.workspace == path or policy.workspace.startswith(path.rstrip("/") + "/"):
            continue  # a store opened as the workspace is not hidden
        spellings = [path]
        if home and path.startswith(home + "/"):
            rest = path[len(home) :]
            spellings += ["~" + rest, "$HOME" + rest, "${HOME}" + rest]
        if any(text in command or text in output for text in spellings):
            named.append(path)
    if not named:
        return ""
    why = {store.path: store.why for store in default_stores(env)}
    parts = []
    for path in named:
        if path in policy.filtered:
            parts.append(
                f"{shown_path(path, env)} is shown to commands without its credential lines"
                if sandbox.name == "bwrap"
                else f"{shown_path(path, env)} is hidden from commands "
                "(it holds registry tokens; Landlock cannot show it filtered)"
            )
        elif path in why:
            parts.append(f"{shown_path(path, env)} is hidden from commands (credential store: {why[path]})")
        else:
            parts.append(
                f"{shown_path(path, env)} is hidden from commands (Tether's own files, or the user's deny_read)"
            )
    return (
        f"[sandbox: {'; '.join(parts)}; the user can expose a credential store with allow_read in their "
        "Tether user config, not you: do not look for a way around it]"
    )
