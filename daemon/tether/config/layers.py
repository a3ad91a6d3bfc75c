"""Reading every settings layer and merging them in the documented order (later wins).

Owns: where the user config file (and MCP servers' own directories, `servers_dir`) is, reading a TOML file
(regular, at most 1 MiB), `TETHER_*` variables, parsed flags, `initializationOptions`, and `load_settings`.
Must not: validate a value itself (``values.py`` does), import anything outside the standard library at
import time, mutate ``os.environ``, create directories or write files.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from tether_protocol import JsonObject

from .settings import (
    CAMEL_TO_KEY,
    SETTING_KEYS,
    SOURCE_INIT_OPTIONS,
    ConfigError,
    Settings,
    unknown_key,
    with_extra,
)

__all__ = ["apply_overrides", "load_settings", "merge", "read_toml", "user_config_path", "validated"]


def validated(
    values: Mapping[str, object], sources: Mapping[str, str], *, strings_ok: bool, base_dir: Path | None
) -> dict[str, object]:
    """``values`` validated and in canonical form (see ``values.validate``); raises
    :class:`ConfigError` for the first value refused, in the layer's order."""
    if not values:
        return {}
    from .values import validate  # only once there is something to validate

    return validate(values, sources, strings_ok=strings_ok, base_dir=base_dir)


def merge(settings: Settings, values: Mapping[str, Any], labels: Mapping[str, str]) -> Settings:
    if not values:
        return settings
    extra = settings.workspace_deny_commands
    if "deny_commands" in values and extra:
        # a later layer replaces the user's own list, never the workspace's additions
        values = {**values, "deny_commands": with_extra(values["deny_commands"], extra)}
    sources = dict(settings.sources)
    sources.update(labels)
    return replace(settings, **values, sources=sources)


def apply_overrides(
    settings: Settings,
    values: Mapping[str, Any],
    source: str,
    *,
    base_dir: Path | None = None,
) -> Settings:
    """Validate ``values`` and merge them over ``settings`` as one more layer.

    Meant for ``initializationOptions`` (also when they arrive after start-up):
    keys may be snake_case or camelCase, a ``None`` value means "not given", an
    unknown key is an error, and types must be real (no "20" for 20). Relative
    paths are resolved against ``base_dir`` (the workspace, when known), else cwd.
    """
    if not isinstance(values, Mapping):
        raise ConfigError(f"{source} must be an object of settings, got {type(values).__name__}", source=source)
    given_as: dict[str, str] = {}
    given: dict[str, object] = {}
    for name, raw in values.items():
        key = (name if name in SETTING_KEYS else CAMEL_TO_KEY.get(name)) if isinstance(name, str) else None
        if key is None or key in given_as:
            # a bad value given before this key is the first mistake
            validated(given, dict.fromkeys(given, source), strings_ok=False, base_dir=base_dir)
            raise _misnamed(name, key, given_as, source)
        given_as[key] = name
        if raw is not None:
            given[key] = raw
    accepted = validated(given, dict.fromkeys(given, source), strings_ok=False, base_dir=base_dir)
    return merge(settings, accepted, dict.fromkeys(accepted, source))


def _misnamed(name: object, key: str | None, given_as: Mapping[str, str], source: str) -> ConfigError:
    """An ``initializationOptions`` key that is not a setting, or a setting given twice."""
    if key is None:
        return unknown_key(name, source, camel_ok=True)
    return ConfigError(
        f"{key} is given twice in {source} (as {given_as[key]!r} and {name!r}); use one spelling",
        key=key,
        source=source,
    )


# ---------------------------------------------------------------------------- files


def user_config_path(env: Mapping[str, str] | None = None) -> tuple[Path, bool]:
    """Where the user config file is, and whether it was named explicitly.

    ``$TETHER_CONFIG`` wins (explicit); else ``$XDG_CONFIG_HOME/tether/config.toml``;
    else ``~/.config/tether/config.toml``. ``HOME`` is read from ``env`` when present
    so tests can point it elsewhere without touching ``os.environ``.
    """
    env = os.environ if env is None else env
    explicit = env.get("TETHER_CONFIG", "")
    if explicit:
        return Path(explicit).expanduser().absolute(), True
    xdg = env.get("XDG_CONFIG_HOME", "")
    # The XDG spec says relative values are invalid and must be ignored.
    if xdg and os.path.isabs(xdg):
        base = Path(xdg)
    else:
        home = env.get("HOME", "")
        base = (Path(home) if home else Path.home()) / ".config"
    return base / "tether" / "config.toml", False


def servers_dir() -> Path:
    """Where stdio MCP servers' own directories live: the user cache dir's `tether/mcp`
    (`$XDG_CACHE_HOME`, else `~/.cache`; `~/Library/Caches` on macOS)."""
    import sys

    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "tether" / "mcp"
    cache = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(cache) if os.path.isabs(cache) else Path.home() / ".cache") / "tether" / "mcp"


# Tables of the user config file that are not settings: `[hooks]` and `[workspaces."<path>"]`
# (tether.hooks reads them from the user config file itself).
TABLE_KEYS = frozenset({"hooks", "workspaces"})

# A config file is a few lines; a bigger one is a mistake or a trap (a link to /dev/zero).
_MAX_CONFIG_BYTES = 1024 * 1024


def read_toml(path: Path, source: str, *, required: bool) -> JsonObject | None:
    """The parsed file, or None when it does not exist (and is not required). Only a
    regular file of at most 1 MiB is read: a FIFO or a device (a link to /dev/stdin or
    /dev/zero in a cloned repository) would block or exhaust the daemon at start."""
    import stat

    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        if required:
            raise ConfigError(
                f"{source} does not exist (named by TETHER_CONFIG); create it or unset TETHER_CONFIG",
                source=source,
            ) from None
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read {source}: {exc.strerror or exc}", source=source) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError(f"cannot read {source}: it is not a regular file", source=source)
        data = os.read(fd, _MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read {source}: {exc.strerror or exc}", source=source) from None
    finally:
        os.close(fd)
    if len(data) > _MAX_CONFIG_BYTES:
        raise ConfigError(f"cannot read {source}: it is over 1 MiB, too big for a config file", source=source)
    import tomllib  # only when a config file actually exists

    try:
        return tomllib.loads(data.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        # tomllib's message ends with "(at line N, column M)".
        raise ConfigError(f"cannot parse {source}: {exc}", source=source) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"cannot parse {source}: not UTF-8 ({exc.reason})", source=source) from None


def _file_layer(settings: Settings, path: Path, source: str, *, required: bool = False) -> Settings:
    data = read_toml(path, source, required=required)
    if not data:
        return settings
    if "mcp_servers" in data:  # the user's own file: a workspace's is refused (workspace_config.py)
        from .mcp_servers import parse_mcp_servers

        data = dict(data)
        settings = replace(settings, mcp_servers=parse_mcp_servers(data.pop("mcp_servers"), source, path.parent))
    given: dict[str, object] = {}
    for key, raw in data.items():
        if key in TABLE_KEYS:
            continue  # read by the package that owns the table
        if key not in SETTING_KEYS:
            # a bad value given before this key is the first mistake
            validated(given, dict.fromkeys(given, source), strings_ok=False, base_dir=path.parent)
            raise unknown_key(key, source, camel_ok=False)
        given[key] = raw
    accepted = validated(given, dict.fromkeys(given, source), strings_ok=False, base_dir=path.parent)
    return merge(settings, accepted, dict.fromkeys(accepted, source))


# ------------------------------------------------------------------ env and flags


def _text_layer(
    settings: Settings,
    values: Mapping[str, Any],
    label: Callable[[str], str],
) -> Settings:
    labels = {key: label(key) for key in values}
    # base_dir=None: relative paths from env/flags mean "relative to where I ran it".
    accepted = validated(values, labels, strings_ok=True, base_dir=None)
    return merge(settings, accepted, labels)


def _env_values(env: Mapping[str, str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for key in SETTING_KEYS:
        raw = env.get(f"TETHER_{key.upper()}")
        # An empty variable counts as unset (`TETHER_MAX_STEPS= tether ...` should not
        # be a parse error). Other TETHER_* variables belong to other components.
        if raw is not None and raw.strip():
            found[key] = raw
    return found


def _flag_values(flags: Mapping[str, Any]) -> dict[str, object]:
    # Flags are parsed by our own CLI, so names are not user input: keys that are not
    # settings (e.g. the rest of vars(argparse.Namespace)) are ignored rather than
    # rejected, and None means the flag was not given.
    found: dict[str, object] = {}
    for name, raw in flags.items():
        key = name.replace("-", "_")
        if key in SETTING_KEYS and raw is not None:
            found[key] = raw
    return found


# ---------------------------------------------------------------------------- entry


def load_settings(
    workspace: Path | None,
    *,
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    init_options: Mapping[str, Any] | None = None,
    user_config: Path | None = None,
) -> Settings:
    """Merge every layer, in the documented order, into validated :class:`Settings`.

    ``env`` defaults to ``os.environ``; ``user_config`` overrides where the user config
    file is looked for (otherwise :func:`user_config_path`). Missing config files are
    skipped, except a file named by ``TETHER_CONFIG``, which must exist.
    """
    env = os.environ if env is None else env
    settings = Settings()

    if user_config is not None:
        user_path, explicit = Path(user_config).expanduser().absolute(), False
    else:
        user_path, explicit = user_config_path(env)
    settings = _file_layer(settings, user_path, f"user config {user_path}", required=explicit)

    if workspace is not None:
        from ..workspace_config import workspace_layer  # here: it imports this package

        settings = workspace_layer(settings, (Path(workspace) / ".tether" / "config.toml").absolute(), user_path)

    settings = _text_layer(settings, _env_values(env), lambda key: f"env TETHER_{key.upper()}")

    if flags:
        settings = _text_layer(settings, _flag_values(flags), lambda key: f"flag --{key.replace('_', '-')}")

    if init_options is not None:
        base = Path(workspace).absolute() if workspace is not None else None
        settings = apply_overrides(settings, init_options, SOURCE_INIT_OPTIONS, base_dir=base)

    return settings
