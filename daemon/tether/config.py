"""Tether's settings: one set of keys, one documented precedence, one validator.

This module owns:

* :class:`Settings`, the frozen record of every configuration key, together with
  ``sources`` (which layer set each key, for ``tether doctor``) and ``refused``
  (the workspace-config keys that were ignored, as :class:`RefusedSetting`);
* reading the two TOML config files, the ``TETHER_*`` environment variables,
  already-parsed command-line flags and the editor's ``initializationOptions``,
  and merging them in this order (later wins)::

      defaults
        < user config       $TETHER_CONFIG, else $XDG_CONFIG_HOME/tether/config.toml,
                            else ~/.config/tether/config.toml
        < workspace config  <workspace>/.tether/config.toml (allowlisted keys only,
                            see tether.workspace_config)
        < environment       TETHER_PROVIDER, TETHER_MODEL, ... (TETHER_<KEY>)
        < flags             {"max_steps": 5, ...}; None means "not given"
        < initializationOptions   camelCase ("maxSteps") or snake_case keys

* validating every value as it enters, so that a bad value is reported with the
  key, the layer it came from, the value and what would have been accepted
  (:class:`ConfigError`).

Security rules:

* ``api_key`` is a secret. ``repr()``/``str()`` of :class:`Settings`, :func:`describe`
  and every :class:`ConfigError` show ``***`` instead of it. Nothing here writes
  it anywhere. (``dataclasses.asdict`` would still expose it; do not use that to
  log or persist settings.)
* The workspace config is someone else's file (often a cloned repository), so it may
  set only the keys on an explicit allowlist (``tether.workspace_config``): nothing
  that moves data out (``record``, ``base_url``, ``home``, ``allow_env``, the sandbox
  and network keys) or changes who answers (``provider``, ``script``, ``cassette``,
  ``api_key``). Any other key, an invalid value or a looser ``mode``/``guard`` is
  refused and ignored, listed on ``Settings.refused`` and logged as a warning; the
  rest of the file still applies and start-up goes on. A workspace's
  ``deny_commands`` add to the user's, whatever later layer sets them.

What this module must NOT do:

* import anything outside the standard library, or anything slow at import time:
  the daemon's start-up path imports it (``tomllib`` and ``difflib`` are imported
  lazily, only when a file exists or an error is being worded);
* mutate ``os.environ``, create directories, or write files;
* decide defaults that belong to other components (which provider to pick when
  ``provider`` is "", the model's context window when ``context_window`` is 0,
  where the data directory lives when ``home`` is "").
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

__all__ = [
    "ConfigError",
    "RefusedSetting",
    "SETTING_KEYS",
    "Settings",
    "apply_overrides",
    "describe",
    "load_settings",
    "user_config_path",
]

# Declared before Settings so the default `sources` can name every key; checked
# against the dataclass fields right after the class so the two cannot drift.
SETTING_KEYS: tuple[str, ...] = (
    "provider",
    "model",
    "base_url",
    "api_key",
    "script",
    "max_steps",
    "mode",
    "home",
    "log_level",
    "context_window",
    "max_output_tokens",
    "max_retries",
    "record",
    "cassette",
    "deny_commands",
    "allow_env",
    "guard",
    "keep_user_turns",
    "sandbox",
    "network",
    "network_commands",
)

PROVIDERS: tuple[str, ...] = ("scripted", "openai", "anthropic", "replay")
MODES: tuple[str, ...] = ("read-only", "ask", "auto-edit", "full-auto")
LOG_LEVELS: tuple[str, ...] = ("debug", "info", "warning", "error")
# the OS sandbox commands run in: "auto" picks bubblewrap, else Landlock; "off" runs
# them unconfined (then no mode or rule ever runs a command without asking)
SANDBOXES: tuple[str, ...] = ("auto", "bwrap", "landlock", "off")

_SECRET_KEYS: frozenset[str] = frozenset({"api_key"})
# Keys that hold filesystem paths: relative values are made absolute against the
# directory of the layer that supplied them, so the meaning does not depend on
# the daemon's cwd at the moment the value is used.
_PATH_KEYS: frozenset[str] = frozenset({"script", "home", "record", "cassette"})
_LIST_KEYS: frozenset[str] = frozenset({"deny_commands", "allow_env", "network_commands"})
_CHOICES: dict[str, tuple[str, ...]] = {
    "guard": ("off", "log", "warn", "block"),
    "provider": PROVIDERS,
    "mode": MODES,
    "log_level": LOG_LEVELS,
    "sandbox": SANDBOXES,
    "network": ("off", "on"),
}
# (minimum, maximum or None for unbounded)
_INT_RANGES: dict[str, tuple[int, int | None]] = {
    "max_steps": (1, 1000),
    "context_window": (0, None),
    "max_output_tokens": (0, None),
    "max_retries": (0, 10),
    "keep_user_turns": (1, 100_000),
}
# from loosest to strictest
_MODE_STRICTNESS = ("full-auto", "auto-edit", "ask", "read-only")

_MASK = "***"
SOURCE_DEFAULT = "default"
SOURCE_INIT_OPTIONS = "initializationOptions"


def no_looser_mode(mode: str, limit: str) -> str:
    """``mode``, or ``limit`` where ``mode`` is looser: the mode a session brought in from
    elsewhere (a restored snapshot) keeps, so that it cannot grant itself more than the
    settings grant a new session. Both must be mode ids (``MODES``)."""
    return mode if _MODE_STRICTNESS.index(mode) >= _MODE_STRICTNESS.index(limit) else limit


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.capitalize() for part in rest)


# initializationOptions come from editor extensions written in JS/TS, where
# camelCase is the norm; both spellings are accepted there.
_CAMEL_TO_KEY: dict[str, str] = {_camel(k): k for k in SETTING_KEYS if _camel(k) != k}


class ConfigError(Exception):
    """A configuration value (or file) that Tether cannot use.

    ``key`` is the setting concerned ("" when the whole file is at fault, e.g. a TOML
    syntax error); ``source`` is the layer label, e.g. "env TETHER_MODE" or
    "workspace config /repo/.tether/config.toml". The message never contains a
    secret's value.
    """

    key: str
    source: str

    def __init__(self, message: str, *, key: str = "", source: str = "") -> None:
        super().__init__(message)
        self.key = key
        self.source = source


class RefusedSetting(NamedTuple):
    """A workspace-config key Tether refused and ignored (for logs, doctor and editors).

    ``key`` is "" when the whole file was refused (it could not be read or parsed).
    """

    key: str
    file: str
    reason: str

    def message(self) -> str:
        what = f"{self.key!r} in" if self.key else "the whole of"
        return f"ignored {what} workspace config {self.file}: {self.reason}"


def _default_sources() -> dict[str, str]:
    return dict.fromkeys(SETTING_KEYS, SOURCE_DEFAULT)


@dataclass(frozen=True, slots=True, repr=False)
class Settings:
    """The merged configuration. Build it with :func:`load_settings`; constructing it
    directly skips validation."""

    provider: str = ""  # "" = not configured yet; a later component picks one
    model: str = ""
    base_url: str = ""
    api_key: str = ""  # SECRET: masked in repr, never written anywhere
    script: str = ""  # absolute path once loaded (see _PATH_KEYS)
    max_steps: int = 20
    mode: str = "ask"
    home: str = ""  # data-dir override; "" = the platform default
    log_level: str = "warning"
    context_window: int = 0  # 0 = the model's default
    max_output_tokens: int = 0  # 0 = the model's default
    max_retries: int = 2  # provider retries of a failed request, before any output
    record: str = ""  # save every model exchange to this cassette file
    cassette: str = ""  # the cassette the `replay` provider plays back
    # command prefixes never run, whatever the mode or rules say (added to built-in ones)
    deny_commands: tuple[str, ...] = ()
    # secret-looking environment variables that commands may still see
    allow_env: tuple[str, ...] = ()
    # the input guard on user messages and tool results: off | log | warn | block
    guard: str = "warn"
    # how many of the latest user turns are sent to the model (older ones stay stored)
    keep_user_turns: int = 50
    # the OS sandbox for commands (user settings only; never from a workspace file)
    sandbox: str = "auto"
    # network for sandboxed commands: "off" unless approved per call or by a rule below
    network: str = "off"
    # command prefixes whose commands get the network in the sandbox (every part covered)
    network_commands: tuple[str, ...] = ()
    # Excluded from equality/hash: two Settings with the same values are the same
    # configuration however they were assembled (and a dict is unhashable).
    sources: dict[str, str] = field(default_factory=_default_sources, compare=False)
    # Not settings: what the workspace config tried and was refused, and the
    # deny_commands it added (kept whatever a later layer sets deny_commands to).
    refused: tuple[RefusedSetting, ...] = field(default=(), compare=False)
    workspace_deny_commands: tuple[str, ...] = field(default=(), compare=False)

    def __repr__(self) -> str:
        parts = []
        for key in SETTING_KEYS:
            value = getattr(self, key)
            if key in _SECRET_KEYS and value:
                parts.append(f"{key}={_MASK!r}")
            else:
                parts.append(f"{key}={value!r}")
        return f"Settings({', '.join(parts)})"

    __str__ = __repr__


_NOT_SETTINGS = ("sources", "refused", "workspace_deny_commands")


def _check_keys_match_fields() -> None:
    names = tuple(name for name in Settings.__dataclass_fields__ if name not in _NOT_SETTINGS)
    if names != SETTING_KEYS:  # pragma: no cover - a programming error, caught by any test run
        raise AssertionError(f"SETTING_KEYS {SETTING_KEYS} != Settings fields {names}")


_check_keys_match_fields()


# --------------------------------------------------------------------------- errors


def _shown(key: str, value: object) -> str:
    """How a value appears in messages: secrets masked, long values cut."""
    if key in _SECRET_KEYS:
        return repr(_MASK)
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _invalid(key: str, value: object, source: str, expectation: str) -> ConfigError:
    return ConfigError(
        f"{key} = {_shown(key, value)} (from {source}) is not valid; {expectation}",
        key=key,
        source=source,
    )


def _unknown_key(key: object, source: str, *, camel_ok: bool) -> ConfigError:
    # difflib is only needed to word this message; keep it off the start-up path.
    import difflib

    name = str(key)
    candidates = list(SETTING_KEYS) + (list(_CAMEL_TO_KEY) if camel_ok else [])
    # "maxSteps"/"max-steps"/"MAX_STEPS" in a TOML file: same letters, other spelling.
    squashed = {c.replace("_", "").lower(): c for c in SETTING_KEYS}
    suggestion = squashed.get(name.replace("_", "").replace("-", "").lower())
    if suggestion is not None and camel_ok and any(ch.isupper() for ch in name):
        suggestion = _camel(suggestion)
    if suggestion is None:
        close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
        suggestion = close[0] if close else None
    message = f"unknown setting {name!r} in {source}"
    if suggestion:
        message += f" (did you mean {suggestion!r}?)"
    message += f"; known settings: {', '.join(SETTING_KEYS)}"
    if camel_ok:
        message += " (camelCase spellings such as maxSteps are also accepted)"
    return ConfigError(message, key=name, source=source)


# ----------------------------------------------------------------------- validation


def _coerce(key: str, raw: object, source: str, *, strings_ok: bool, base_dir: Path | None) -> str | int:
    """Validate one value and return it in canonical form.

    ``strings_ok``: the layer can only carry text (env vars, untyped flags), so
    integers are parsed from strings. Typed layers (TOML, JSON) must use real
    integers, so ``max_steps = "ten"`` and ``max_steps = "10"`` are both mistakes
    worth reporting rather than guessing about.
    """
    if key in _LIST_KEYS:
        # Typed layers give a list of strings; text layers a comma-separated string.
        if isinstance(raw, str) and strings_ok:
            items = [part.strip() for part in raw.split(",")]
        elif isinstance(raw, (list, tuple)) and all(isinstance(i, str) for i in raw):
            items = [i.strip() for i in raw]
        else:
            raise _invalid(key, raw, source, "expected a list of strings")
        return tuple(i for i in items if i)  # type: ignore[return-value]

    if key in _INT_RANGES:
        low, high = _INT_RANGES[key]
        if high is None:
            expectation = f"expected an integer >= {low}"
            if low == 0:
                expectation += " (0 means the model's default)"
        else:
            expectation = f"expected an integer from {low} to {high}"
        # bool is an int subclass; `max_steps = true` is a mistake, not 1.
        if isinstance(raw, bool):
            raise _invalid(key, raw, source, expectation)
        if isinstance(raw, int):
            number = raw
        elif isinstance(raw, str) and strings_ok:
            try:
                number = int(raw.strip())
            except ValueError:
                raise _invalid(key, raw, source, expectation) from None
        else:
            raise _invalid(key, raw, source, expectation)
        if number < low or (high is not None and number > high):
            raise _invalid(key, raw, source, expectation)
        return number

    if key in _PATH_KEYS and isinstance(raw, os.PathLike):
        raw = os.fspath(raw)
    if not isinstance(raw, str):
        raise _invalid(key, raw, source, "expected a string")

    if key in _CHOICES:
        # Case-insensitive because env vars are often written in capitals
        # (TETHER_LOG_LEVEL=INFO); stored in the canonical lower-case spelling.
        value = raw.strip().lower()
        choices = _CHOICES[key]
        if value in choices or (key == "provider" and value == ""):
            return value
        accepted = ", ".join(choices)
        if key == "provider":
            accepted += ' (or "" to let Tether choose)'
        raise _invalid(key, raw, source, f"use one of: {accepted}")

    if key == "base_url":
        value = raw.strip()
        if value and not value.startswith(("http://", "https://")):
            raise _invalid(
                key, raw, source, 'expected an http:// or https:// URL (or "" for the provider\'s default)'
            )
        return value

    if key in _SECRET_KEYS:
        # Whitespace or control characters would end up in an HTTP header; report it
        # without echoing the value.
        if raw and (not raw.isprintable() or any(ch.isspace() for ch in raw)):
            raise ConfigError(
                f"{key} (from {source}) is not valid; it contains whitespace or control characters "
                "(value not shown)",
                key=key,
                source=source,
            )
        return raw

    if key in _PATH_KEYS:
        if not raw:
            return raw
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = (base_dir if base_dir is not None else Path.cwd()) / path
        # normpath, not resolve(): keep symlinks as the user wrote them and do not
        # touch the filesystem (the file may legitimately not exist yet).
        return os.path.normpath(path)

    return raw


def _merge(settings: Settings, values: Mapping[str, Any], labels: Mapping[str, str]) -> Settings:
    if not values:
        return settings
    extra = settings.workspace_deny_commands
    if "deny_commands" in values and extra:
        # a later layer replaces the user's own list, never the workspace's additions
        values = {**values, "deny_commands": with_extra(values["deny_commands"], extra)}
    sources = dict(settings.sources)
    sources.update(labels)
    return replace(settings, **values, sources=sources)


def with_extra(items: tuple[str, ...], extra: tuple[str, ...]) -> tuple[str, ...]:
    """``items`` followed by those of ``extra`` not already in it (order kept)."""
    return tuple(items) + tuple(i for i in extra if i not in items)


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
        raise ConfigError(
            f"{source} must be an object of settings, got {type(values).__name__}", source=source
        )
    given_as: dict[str, str] = {}
    accepted: dict[str, Any] = {}
    for name, raw in values.items():
        key: str | None = None
        if isinstance(name, str):
            key = name if name in SETTING_KEYS else _CAMEL_TO_KEY.get(name)
        if key is None:
            raise _unknown_key(name, source, camel_ok=True)
        if key in given_as:
            raise ConfigError(
                f"{key} is given twice in {source} (as {given_as[key]!r} and {name!r}); use one spelling",
                key=key,
                source=source,
            )
        given_as[key] = name
        if raw is None:
            continue
        accepted[key] = _coerce(key, raw, source, strings_ok=False, base_dir=base_dir)
    return _merge(settings, accepted, dict.fromkeys(accepted, source))


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


# A config file is a few lines; a bigger one is a mistake or a trap (a link to /dev/zero).
_MAX_CONFIG_BYTES = 1024 * 1024


def _read_toml(path: Path, source: str, *, required: bool) -> dict[str, Any] | None:
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
    data = _read_toml(path, source, required=required)
    if not data:
        return settings
    accepted: dict[str, Any] = {}
    for key, raw in data.items():
        if key not in SETTING_KEYS:
            raise _unknown_key(key, source, camel_ok=False)
        accepted[key] = _coerce(key, raw, source, strings_ok=False, base_dir=path.parent)
    return _merge(settings, accepted, dict.fromkeys(accepted, source))


# ------------------------------------------------------------------ env and flags


def _text_layer(
    settings: Settings,
    values: Mapping[str, Any],
    label: Callable[[str], str],
) -> Settings:
    accepted: dict[str, Any] = {}
    labels: dict[str, str] = {}
    for key, raw in values.items():
        source = label(key)
        # base_dir=None: relative paths from env/flags mean "relative to where I ran it".
        accepted[key] = _coerce(key, raw, source, strings_ok=True, base_dir=None)
        labels[key] = source
    return _merge(settings, accepted, labels)


def _env_values(env: Mapping[str, str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for key in SETTING_KEYS:
        raw = env.get(f"TETHER_{key.upper()}")
        # An empty variable counts as unset (`TETHER_MAX_STEPS= tether ...` should not
        # be a parse error). Other TETHER_* variables belong to other components.
        if raw is not None and raw.strip():
            found[key] = raw
    return found


def _flag_values(flags: Mapping[str, Any]) -> dict[str, Any]:
    # Flags are parsed by our own CLI, so names are not user input: keys that are not
    # settings (e.g. the rest of vars(argparse.Namespace)) are ignored rather than
    # rejected, and None means the flag was not given.
    found: dict[str, Any] = {}
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
        from .workspace_config import workspace_layer  # here: it imports this module

        settings = workspace_layer(settings, (Path(workspace) / ".tether" / "config.toml").absolute(), user_path)

    settings = _text_layer(settings, _env_values(env), lambda key: f"env TETHER_{key.upper()}")

    if flags:
        settings = _text_layer(settings, _flag_values(flags), lambda key: f"flag --{key.replace('_', '-')}")

    if init_options is not None:
        base = Path(workspace).absolute() if workspace is not None else None
        settings = apply_overrides(settings, init_options, SOURCE_INIT_OPTIONS, base_dir=base)

    return settings


def describe(settings: Settings) -> list[tuple[str, str, str]]:
    """(key, value as shown to a human with secrets masked, source) for every key."""
    rows: list[tuple[str, str, str]] = []
    for key in SETTING_KEYS:
        value = getattr(settings, key)
        if key in _SECRET_KEYS:
            shown = _MASK if value else "(not set)"
        elif value == "":
            shown = "(not set)"
        else:
            shown = str(value)
        rows.append((key, shown, settings.sources.get(key, SOURCE_DEFAULT)))
    return rows
