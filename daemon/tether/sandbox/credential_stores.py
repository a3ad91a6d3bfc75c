"""The credential stores commands must not read, and the token files they see filtered.

Owns: the default list of stores (SSH, cloud and registry credentials, keyrings, browser profiles, password
hashes and private keys), the token files whose lines are filtered, and `read_limits`: that list after the
user's `allow_read` and `deny_read` (kept per inputs: HOME, XDG_*, the two lists, the host keys now).
Must not: read file contents, decide how a backend hides a path (bwrap.py, landlock.py), or answer for other inputs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["HiddenPath", "ReadLimits", "default_stores", "read_limits", "shown_path", "token_files"]

# (where: "home" | "config" | "data" | "abs", path relative to it, what it is)
_STORES: tuple[tuple[str, str, str], ...] = (
    ("home", ".ssh", "SSH keys"),
    ("home", ".aws", "AWS credentials"),
    ("home", ".azure", "Azure credentials"),
    ("config", "gcloud", "Google Cloud credentials"),
    ("config", "gh", "GitHub CLI token"),
    ("config", "hub", "GitHub token (hub)"),
    ("home", ".netrc", "login passwords (netrc)"),
    ("home", ".git-credentials", "git credentials"),
    ("config", "git/credentials", "git credentials"),
    ("home", ".docker/config.json", "Docker registry logins"),
    ("home", ".kube", "Kubernetes credentials"),
    ("home", ".gnupg", "GnuPG keys"),
    ("home", ".password-store", "pass password store"),
    ("data", "keyrings", "desktop keyring"),
    ("data", "kwalletd", "KWallet keyring"),
    ("home", ".kde/share/apps/kwallet", "KWallet keyring"),
    ("home", ".mozilla", "browser profile (Firefox)"),
    ("home", ".thunderbird", "mail profile (Thunderbird)"),
    ("config", "google-chrome", "browser profile (Chrome)"),
    ("config", "chromium", "browser profile (Chromium)"),
    ("config", "BraveSoftware", "browser profile (Brave)"),
    ("config", "microsoft-edge", "browser profile (Edge)"),
    ("config", "vivaldi", "browser profile (Vivaldi)"),
    ("config", "opera", "browser profile (Opera)"),
    ("home", "snap/firefox", "browser profile (Firefox snap)"),
    ("home", ".var/app/org.mozilla.firefox", "browser profile (Firefox flatpak)"),
    ("home", ".terraform.d/credentials.tfrc.json", "Terraform Cloud token"),
    ("config", "op", "1Password CLI"),
    ("home", ".vault-token", "Vault token"),
    ("home", ".cargo/credentials.toml", "crates.io token"),
    ("home", ".cargo/credentials", "crates.io token"),
    ("home", ".gem/credentials", "RubyGems token"),
    ("config", "containers/auth.json", "container registry logins"),
    ("home", ".pgpass", "PostgreSQL passwords"),
    ("config", "pypoetry/auth.toml", "Poetry repository passwords"),
    ("config", "composer/auth.json", "Composer tokens"),
    ("home", ".composer/auth.json", "Composer tokens"),
    ("config", "glab-cli", "GitLab CLI token"),
    ("config", "rclone/rclone.conf", "rclone remote keys"),
    # the machine's own secrets: readable by root, which Tether (and so a command) may be
    ("abs", "/etc/shadow", "system password hashes"),
    ("abs", "/etc/gshadow", "system password hashes"),
    ("abs", "/etc/ssl/private", "TLS private keys"),
)
# Files that hold settings a tool needs and, on some lines, a token: the sandbox shows a
# copy without those lines (bubblewrap) or hides them whole (Landlock cannot replace a file).
_TOKEN_FILES: tuple[tuple[str, str], ...] = (
    ("home", ".npmrc"),
    ("home", ".pypirc"),
    ("home", ".yarnrc"),
    ("home", ".yarnrc.yml"),
    ("config", "pip/pip.conf"),
    ("home", ".pip/pip.conf"),
)


@dataclass(frozen=True, slots=True)
class HiddenPath:
    path: str  # absolute, as named (not resolved)
    why: str  # "SSH keys", "your deny_read", ...


@dataclass(frozen=True, slots=True)
class ReadLimits:
    """What commands cannot read: `hidden` paths, and `filtered` token files (also hidden
    where the backend cannot show a filtered copy)."""

    hidden: tuple[HiddenPath, ...]
    filtered: tuple[str, ...]
    exposed: tuple[str, ...]  # default stores the user's allow_read exposes


def _bases(home: str, xdg_config: str, xdg_data: str) -> dict[str, tuple[str, ...]]:
    config, data = os.path.join(home, ".config"), os.path.join(home, ".local", "share")
    # both spellings: a command may set XDG_* itself, the files stay where they are
    return {
        "abs": ("/",),
        "home": (home,),
        "config": (config, *([xdg_config] if os.path.isabs(xdg_config) and xdg_config != config else [])),
        "data": (data, *([xdg_data] if os.path.isabs(xdg_data) and xdg_data != data else [])),
    }


def _places(env: Mapping[str, str]) -> tuple[str, str, str]:
    """What the stores' places depend on: HOME and the two XDG directories."""
    return env.get("HOME") or os.path.expanduser("~"), env.get("XDG_CONFIG_HOME", ""), env.get("XDG_DATA_HOME", "")


def default_stores(env: Mapping[str, str]) -> tuple[HiddenPath, ...]:
    return (*_stores(_places(env)), *_host_keys())


@lru_cache(maxsize=8)
def _stores(places: tuple[str, str, str]) -> tuple[HiddenPath, ...]:
    bases = _bases(*places)
    return tuple(HiddenPath(os.path.join(base, rel), why) for where, rel, why in _STORES for base in bases[where])


def _host_keys() -> tuple[HiddenPath, ...]:
    """The SSH server's private host keys (`/etc/ssh/ssh_host_*_key`), as they are now."""
    try:
        names = sorted(os.listdir("/etc/ssh"))
    except OSError:
        return ()
    return tuple(
        HiddenPath(f"/etc/ssh/{name}", "SSH host key")
        for name in names
        if name.startswith("ssh_host_") and name.endswith("_key")
    )


def token_files(env: Mapping[str, str]) -> tuple[str, ...]:
    return _token_files(_places(env))


@lru_cache(maxsize=8)
def _token_files(places: tuple[str, str, str]) -> tuple[str, ...]:
    bases = _bases(*places)
    return tuple(os.path.join(base, rel) for where, rel in _TOKEN_FILES for base in bases[where])


def expanded(path: str, home: str) -> str:
    """A `deny_read`/`allow_read` entry (absolute or `~/...`) as an absolute, normalised path."""
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    return os.path.normpath(path)


def read_limits(env: Mapping[str, str], deny_read: Sequence[str] = (), allow_read: Sequence[str] = ()) -> ReadLimits:
    """The default stores and token files, less those at or under an `allow_read` entry
    (user config only), plus every `deny_read` entry (which wins over allow_read).
    Built once per set of inputs (each turn asks): the host keys are listed at every
    call, so a key made since the last turn is in the key and hidden from the next."""
    return _read_limits(_places(env), tuple(deny_read), tuple(allow_read), _host_keys())


@lru_cache(maxsize=8)
def _read_limits(
    places: tuple[str, str, str],
    deny_read: tuple[str, ...],
    allow_read: tuple[str, ...],
    host_keys: tuple[HiddenPath, ...],
) -> ReadLimits:
    home = places[0]
    allowed = [expanded(path, home) for path in allow_read]

    def exposed(path: str) -> bool:
        return any(path == entry or path.startswith(entry.rstrip("/") + "/") for entry in allowed)

    defaults = (*_stores(places), *host_keys)
    hidden = [store for store in defaults if not exposed(store.path)]
    denied = [expanded(path, home) for path in deny_read]
    hidden += [HiddenPath(path, "your deny_read") for path in denied if path not in {h.path for h in hidden}]
    filtered = tuple(path for path in _token_files(places) if not exposed(path) and path not in denied)
    return ReadLimits(tuple(hidden), filtered, tuple(store.path for store in defaults if exposed(store.path)))


def shown_path(path: str, env: Mapping[str, str]) -> str:
    """`path` as the user writes it: `~/.ssh` for a path under HOME."""
    home = (env.get("HOME") or os.path.expanduser("~")).rstrip("/")
    return "~" + path[len(home) :] if home and path.startswith(home + "/") else path
