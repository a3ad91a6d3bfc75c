"""Trust in a workspace's hooks is trust in their content: a pinned sha256.

Owns: the digest (the `[hooks]` table and every workspace file a hook's command names), the pin file
`trusted_hooks.json` in the data directory, the notice for changed hooks, and `tether hooks trust`.
Must not: run hooks, or decide that a workspace is trusted (the user config's `trust_hooks` does).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shlex
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

__all__ = ["PIN_FILE", "hooks_digest", "hooks_trust_main", "pinned_check", "trust_now"]

PIN_FILE = "trusted_hooks.json"


def hooks_digest(workspace: Path, table: object) -> str:
    """sha256 of the `[hooks]` table (as JSON, keys sorted), of each file inside the
    workspace that a hook's command names (`./scripts/guard.sh`, `python3 hooks/check.py`)
    and of where each link among those names points (a link a command retargets)."""
    digest = hashlib.sha256(json.dumps(table, sort_keys=True, default=str).encode())
    root = os.path.realpath(workspace)
    for word in sorted(set(_command_words(table))):
        named = os.path.normpath(os.path.join(root, os.path.expanduser(word)))
        real = os.path.realpath(named)
        try:
            if named.startswith(root + os.sep) and os.path.islink(named):
                digest.update(f"\0{word}\0->{os.readlink(named)}".encode())
            if real.startswith(root + os.sep) and os.path.isfile(real):
                with open(real, "rb") as file:
                    digest.update(f"\0{os.path.relpath(real, root)}\0".encode())
                    digest.update(hashlib.file_digest(file, "sha256").digest())
        except OSError:
            digest.update(f"\0{word}\0unreadable".encode())
    return digest.hexdigest()


def _command_words(table: object) -> Iterator[str]:
    """The words of every hook's command."""
    for command in _commands(table):
        try:
            yield from shlex.split(command)
        except ValueError:  # unbalanced quotes: the words as written
            yield from command.split()


def _commands(value: object) -> Iterator[str]:
    """Every `command` string in the table (both shapes nest them)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "command" and isinstance(item, str):
                yield item
            else:
                yield from _commands(item)
    elif isinstance(value, list):
        for item in value:
            yield from _commands(item)


def pinned_check(home: Path, workspace: Path, table: object, config: Path) -> str | None:
    """None when the trusted hooks may run: their digest is the pinned one, or none was
    pinned yet (it is pinned now). Otherwise the notice saying why they were not run."""
    digest = hooks_digest(workspace, table)
    key = os.path.realpath(workspace)
    try:
        pins = _read(home)
        if key not in pins:
            _write(home, {**pins, key: digest})
            return None
    except (OSError, ValueError) as exc:
        return (
            f"hooks in {config} were not run: the record of the hooks you trusted ({home / PIN_FILE}) "
            f"cannot be read or written ({exc}); fix it, then run `tether hooks trust {workspace}`"
        )
    if pins[key] == digest:
        return None
    return (
        f"hooks in {config} changed since you trusted them and were not run (a command or a change "
        f"you pulled may have rewritten them, or a file they run). Read them; to trust them as they "
        f"are now, run `tether hooks trust {workspace}`"
    )


def trust_now(home: Path, workspace: Path, table: object) -> str:
    """Pin the hooks' current digest (`tether hooks trust`); the digest."""
    digest = hooks_digest(workspace, table)
    _write(home, {**_read(home), os.path.realpath(workspace): digest})
    return digest


def _read(home: Path) -> dict[str, str]:
    try:
        text = (home / PIN_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    data = json.loads(text)
    pins = data.get("workspaces") if isinstance(data, dict) else None
    if not isinstance(pins, dict) or not all(isinstance(v, str) for v in pins.values()):
        raise ValueError(f"{home / PIN_FILE} is not a record of trusted hooks")
    return pins


def _write(home: Path, pins: dict[str, str]) -> None:
    """Atomically, readable by the user only."""
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    temp = home / f".{PIN_FILE}.{secrets.token_hex(4)}.tmp"
    with open(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as file:
        json.dump({"version": 1, "workspaces": pins}, file, indent=1, sort_keys=True)
    os.replace(temp, home / PIN_FILE)


def hooks_trust_main(workspace: Path, home: Path) -> int:
    """`tether hooks trust [--workspace DIR]`: trust the workspace's hooks as they are now."""
    from ..config.layers import read_toml, user_config_path
    from ..config.settings import ConfigError
    from .config import trusts_workspace

    config = workspace / ".tether" / "config.toml"
    try:
        table = (read_toml(config, f"workspace config {config}", required=False) or {}).get("hooks")
    except ConfigError as exc:
        print(f"tether hooks trust: {exc}", file=sys.stderr)
        return 2
    if table is None:
        print(f"tether hooks trust: {config} has no [hooks]; nothing to trust", file=sys.stderr)
        return 1
    try:
        digest = trust_now(home, workspace, table)
    except (OSError, ValueError) as exc:
        print(
            f"tether hooks trust: cannot record the trust in {home / PIN_FILE} ({exc}); fix or remove "
            f"that file (then every trusted workspace's hooks are pinned again at their next turn)",
            file=sys.stderr,
        )
        return 2
    print(f"trusted the hooks in {config} as they are now (sha256 {digest[:16]}…):")
    for command in _commands(table):
        print(f"  {command}")
    user_path = user_config_path()[0]
    try:
        user = read_toml(user_path, f"user config {user_path}", required=False) or {}
    except ConfigError:
        user = {}
    if not trusts_workspace(user.get("workspaces"), workspace):
        print(f'they run once your user config {user_path} has [workspaces."{workspace}"] trust_hooks = true')
    return 0
