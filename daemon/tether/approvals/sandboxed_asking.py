"""Sandbox-aware asking: which commands mode auto-edit runs without a prompt (`sandbox_auto_allow`).

Owns: the check that the OS sandbox is what keeps a command harmless (bubblewrap, plain and fully seen, no
network, nothing outside the workspace, no dotfile), and why a command fails it (decision 0004).
Must not: decide (`gate.py`) or parse shell.
"""

from __future__ import annotations

import os
import posixpath
from typing import TYPE_CHECKING

from .commands import ParsedCommand, words_start_with

if TYPE_CHECKING:
    from pathlib import Path

    from .parts import CommandPart

__all__ = ["RAN_SANDBOXED", "why_asked_in_sandbox"]

RAN_SANDBOXED = (
    "allowed without asking: it runs in the OS sandbox with no network and writes only inside the "
    "workspace and a private temp dir (sandbox_auto_allow in mode auto-edit)"
)
# Programs, and program + subcommand prefixes, that reach the network. Not what keeps a
# command in (the sandbox has no network): without one listed here a command that needs
# the network fails and says so, and the user can allow it once with the network.
NETWORK_PREFIXES: tuple[str, ...] = (
    "curl",
    "wget",
    "ssh",
    "scp",
    "sftp",
    "rsync",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "telnet",
    "ftp",
    "ping",
    "dig",
    "nslookup",
    "host",
    "whois",
    "gh",
    "aws",
    "gcloud",
    "az",
    "kubectl",
    "helm",
    "npx",
    "git push",
    "git pull",
    "git fetch",
    "git clone",
    "git ls-remote",
    "git remote",
    "git submodule",
    "git send-email",
    "git request-pull",
    *(
        f"{tool} {sub}"
        for tool in ("npm", "pnpm", "yarn", "bun")
        for sub in (
            "install",
            "i",
            "ci",
            "add",
            "publish",
            "update",
            "upgrade",
            "outdated",
            "audit",
            "login",
            "view",
            "info",
            "dlx",
            "create",
            "exec",
            "x",
        )
    ),
    "pip install",
    "pip download",
    "pip3 install",
    "pip3 download",
    "python -m pip",
    "python3 -m pip",
    "uv pip",
    "uv sync",
    "uv add",
    "uv lock",
    "uv tool",
    "uvx",
    "pipx",
    "poetry install",
    "poetry add",
    "poetry update",
    "poetry lock",
    "poetry publish",
    "cargo install",
    "cargo fetch",
    "cargo publish",
    "cargo update",
    "cargo add",
    "go get",
    "go install",
    "go mod",
    "docker",
    "podman",
    "gem install",
    "bundle install",
    "bundle update",
    "composer",
    "apt",
    "apt-get",
    "brew",
    "conda",
    "deno install",
)
_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
# backends that keep the workspace's `.git` and `.tether/` read-only (sandbox/bwrap.py)
_KEEPS_GIT_READ_ONLY = frozenset({"bwrap"})


def why_asked_in_sandbox(parsed: ParsedCommand, network: bool, workspace: Path | None, cwd: str, backend: str) -> str:
    """Why the sandbox alone does not make this command safe to run unasked ("" when it does)."""
    if backend not in _KEEPS_GIT_READ_ONLY:
        # Landlock leaves `.git` and `.tether/` writable: workspace code run unasked could
        # plant a git hook that runs outside any sandbox at the user's next git command
        return f"the {backend or 'OS'} sandbox cannot keep `.git` and `.tether/` read-only, so commands are asked"
    if not parsed.fully_seen:
        return parsed.unseen[0]
    if not parsed.plain:
        return parsed.not_plain[0]
    if network:
        return "it would run with the network (your network settings)"
    if workspace is None:
        return "the workspace is not known"
    for part in parsed.parts:
        texts = part.texts
        reaching = next((p for p in NETWORK_PREFIXES if words_start_with(texts, p)), None)
        if reaching is not None:
            return f"`{reaching}` reaches the network, which sandboxed commands do not have"
        outside = _outside_word(part, workspace, cwd)
        if outside:
            return f"`{outside}` is outside the workspace"
        dotted = next((t for t in part.texts[1:] if any(_dotted(c) for c in _paths_in(t))), None)
        if dotted is not None:
            return f"`{dotted}` {_DOTTED}"
    written = next((w for w in parsed.writes if _dotted(w)), None)
    return f"`{written}` {_DOTTED}" if written is not None else ""


_DOTTED = "is a dotfile or in a dot-folder: configuration that editors, git or shells may run outside the sandbox"


def _paths_in(text: str) -> tuple[str, ...]:
    """The word, and the value after an option's `=` (`--output=/etc/x`): either may be a path."""
    return (text, text.split("=", 1)[1]) if text.startswith("-") and "=" in text else (text,)


def _dotted(word: str) -> bool:
    """`.vscode/settings.json`, `.envrc`, `src/.hidden`: not `.`, `..` or `./src`."""
    return any(c.startswith(".") and c.strip(".") for c in word.split("/"))  # not `...` (go's)


def _outside_word(part: CommandPart, workspace: Path, cwd: str) -> str:
    """The first argument naming a path outside the workspace (`/etc/x`, `~/.bashrc`, `..`)."""
    here = posixpath.normpath(posixpath.join(str(workspace), cwd))
    for text in part.texts[1:]:
        if any(_leaves(candidate, here, workspace) for candidate in _paths_in(text)):
            return text
    return ""


def _leaves(word: str, here: str, workspace: Path) -> bool:
    if word in _DEVICES:
        return False
    if word.startswith("~") or word.startswith("$"):
        return True
    if not (word.startswith("/") or word == ".." or word.startswith("../") or "/../" in word or word.endswith("/..")):
        return False
    path = posixpath.normpath(posixpath.join(here, word))
    root = str(workspace)
    return os.path.commonpath([path, root]) != root
