"""Validating one layer of settings: the settings' one converter, a hook per key of :class:`Settings`.

Owns: that converter (every layer through it, so a value means the same wherever it is written) and the
hooks, chosen by each field's type and `Accepts` (a few keys have their own): each checks and canonicalises
its key's value, typed layers must give real types (decision 0006).
Must not: import anything outside the standard library at import time, read files, or merge layers.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from .settings import ACCEPTS, PATH_KEYS, SETTING_KEYS, TYPES, concealed, invalid

__all__ = ["validate"]

# a key's structure hook: (the raw value, the field's type) -> the canonical value
Hook = Callable[[Any, Any], Any]


class _Refused(Exception):
    """Raised by a hook: what would have been accepted, and the value the message shows."""

    def __init__(self, expectation: str, value: object) -> None:
        super().__init__(expectation)
        self.expectation = expectation
        self.value = value


class _Concealed(Exception):
    """Raised by a secret's hook: the value is refused and must not be shown."""


def validate(
    values: Mapping[str, object], sources: Mapping[str, str], *, strings_ok: bool, base_dir: Path | None
) -> dict[str, object]:
    """``values`` (setting keys only, in the layer's order) in canonical form.

    ``sources`` labels each key's layer for messages; ``strings_ok`` says the layer can only
    carry text; relative paths are resolved against ``base_dir`` (None: the cwd). Raises
    :class:`ConfigError` for the first refused value.
    """
    hooks = _converter(strings_ok)
    accepted: dict[str, object] = {}
    for key, value in values.items():
        try:
            accepted[key] = hooks[key](value, None)
        except _Refused as refused:
            raise invalid(key, refused.value, sources[key], refused.expectation) from None
        except _Concealed:
            raise concealed(key, sources[key]) from None
    for key in PATH_KEYS.intersection(accepted):
        value = accepted[key]
        if isinstance(value, str) and value:  # `_path` made it text
            accepted[key] = _absolute(value, base_dir)
    return accepted


def _absolute(value: str, base_dir: Path | None) -> str:
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = (base_dir if base_dir is not None else Path.cwd()) / path
    # normpath, not resolve(): keep symlinks as the user wrote them and do not
    # touch the filesystem (the file may legitimately not exist yet).
    return os.path.normpath(path)


@cache
def _converter(strings_ok: bool) -> dict[str, Hook]:
    """The structure of a layer (text layers, or typed ones): its hook for each key."""
    return {key: _hook(key, strings_ok) for key in SETTING_KEYS}


def _hook(key: str, strings_ok: bool) -> Hook:
    """The key's own rule if it has one, else what its field declares (`Accepts`)."""
    own = _OWN_RULES.get(key)
    if own is not None:
        return own(strings_ok)
    accepts, kind = ACCEPTS[key], TYPES[key]
    if kind == "bool":
        return _boolean(strings_ok)
    if kind == "tuple[str, ...]":
        return _string_list(strings_ok)
    if kind == "int":
        return _integer(accepts.low, accepts.high, strings_ok=strings_ok)
    if kind != "str":  # pragma: no cover - a programming error, caught by any test run
        raise AssertionError(f"setting {key!r} has type {kind}, which no layer can write")
    if accepts.choices:
        return _choice(accepts.choices, blank_ok=accepts.blank_ok)
    if accepts.secret:
        return _secret
    return _path if accepts.path else _text


# ------------------------------------------------------------------------------ hooks


def _string(value: object) -> str:
    if not isinstance(value, str):
        raise _Refused("expected a string", value)
    return value


def _text(value: object, _: object) -> str:
    return _string(value)


def _path(value: object, _: object) -> str:
    # flags may carry a Path; made absolute against the layer's directory by `validate`
    return _string(os.fspath(value) if isinstance(value, os.PathLike) else value)


def _boolean(strings_ok: bool) -> Hook:
    def hook(value: object, _: object) -> bool:
        if isinstance(value, bool):
            return value
        if strings_ok and isinstance(value, str) and value.strip().lower() in _BOOL_WORDS:
            return _BOOL_WORDS[value.strip().lower()]
        raise _Refused("expected true or false", value)

    return hook


_BOOL_WORDS = {"1": True, "true": True, "on": True, "yes": True, "0": False, "false": False, "off": False, "no": False}


def _string_list(strings_ok: bool) -> Hook:
    def hook(value: object, _: object) -> tuple[str, ...]:
        # Typed layers give a list of strings; text layers a comma-separated string.
        if isinstance(value, str) and strings_ok:
            items = [part.strip() for part in value.split(",")]
        elif isinstance(value, (list, tuple)) and all(isinstance(i, str) for i in value):
            items = [i.strip() for i in value]
        else:
            raise _Refused("expected a list of strings", value)
        return tuple(i for i in items if i)

    return hook


def _socket_paths(strings_ok: bool) -> Hook:
    listed = _string_list(strings_ok)

    def hook(value: object, _: object) -> tuple[str, ...]:
        paths = listed(value, None)
        if not all(os.path.isabs(path) and "\0" not in path for path in paths):
            raise _Refused("expected a list of absolute paths of unix sockets", value)
        return tuple(os.path.normpath(path) for path in paths)

    return hook


def _network_commands(strings_ok: bool) -> Hook:
    """A list of prefixes (the network), or a table of prefix -> domains (the proxy with
    those domains), written "prefix -> domain domain" (`Settings.network_commands`)."""
    listed = _string_list(strings_ok)

    def hook(value: object, _: object) -> tuple[str, ...]:
        if not isinstance(value, Mapping):
            return tuple(entry for entry in listed(value, None) if "->" not in entry)
        entries: list[str] = []
        for prefix, domains in value.items():
            names = listed(domains, None) if isinstance(domains, (list, tuple)) else None
            if (
                not isinstance(prefix, str)
                or not prefix.strip()
                or "->" in prefix
                or names is None
                or not all(_DOMAIN.fullmatch(name) for name in names)
            ):
                raise _Refused(
                    'expected a list of command prefixes, or a table {"npm install" = '
                    '["registry.npmjs.org"]} of prefixes and the domains their commands reach',
                    value,
                )
            entries.append(f"{' '.join(prefix.split())} -> {' '.join(names)}")
        return tuple(entries)

    return hook


def _read_paths(strings_ok: bool) -> Hook:
    """`deny_read`/`allow_read`: absolute paths or `~/...` (expanded with HOME when used)."""
    listed = _string_list(strings_ok)

    def hook(value: object, _: object) -> tuple[str, ...]:
        paths = listed(value, None)
        bad = [p for p in paths if "\0" in p or not (os.path.isabs(p) or p == "~" or p.startswith("~/"))]
        if bad:
            raise _Refused(f"expected absolute paths or paths starting with ~/ ({bad[0]!r} is neither)", value)
        return tuple(p if p.startswith("~") else os.path.normpath(p) for p in paths)

    return hook


_DOMAIN = re.compile(r"(\*\.)?[A-Za-z0-9.:\[\]-]+")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _credentials(value: object, _: object) -> tuple[str, ...]:
    """{host = {header = "Authorization", env = "GH_TOKEN"}} as "host header ENV" entries."""
    expected = 'expected a table {"github.com" = {header = "Authorization", env = "GH_TOKEN"}}'
    if not isinstance(value, Mapping):
        raise _Refused(expected, value)
    entries: list[str] = []
    for host, spec in value.items():
        header = spec.get("header") if isinstance(spec, Mapping) else None
        env = spec.get("env") if isinstance(spec, Mapping) else None
        if not (
            isinstance(host, str)
            and _DOMAIN.fullmatch(host)
            and "*" not in host
            and isinstance(header, str)
            and _TOKEN_NAME.fullmatch(header)
            and isinstance(env, str)
            and _ENV_NAME.fullmatch(env)
            and set(spec) <= {"header", "env"}
        ):
            raise _Refused(expected, value)
        entries.append(f"{host.lower()} {header} {env}")
    return tuple(entries)


_TOKEN_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _integer(low: int, high: int | None, *, strings_ok: bool) -> Hook:
    if high is None:
        expectation = f"expected an integer >= {low}"
        if low == 0:
            expectation += " (0 means the model's default)"
    else:
        expectation = f"expected an integer from {low} to {high}"

    def hook(value: object, _: object) -> int:
        # bool is an int subclass; `max_steps = true` is a mistake, not 1.
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, str) and strings_ok:
            try:
                number = int(value.strip())
            except ValueError:
                raise _Refused(expectation, value) from None
        else:
            raise _Refused(expectation, value)
        if number < low or (high is not None and number > high):
            raise _Refused(expectation, value)
        return number

    return hook


def _choice(choices: tuple[str, ...], *, blank_ok: bool) -> Hook:
    accepted = ", ".join(choices)
    if blank_ok:
        accepted += ' (or "" to let Tether choose)'

    def hook(value: object, _: object) -> str:
        # Case-insensitive because env vars are often written in capitals
        # (TETHER_LOG_LEVEL=INFO); stored in the canonical lower-case spelling.
        chosen = _string(value).strip().lower()
        if chosen in choices or (blank_ok and chosen == ""):
            return chosen
        raise _Refused(f"use one of: {accepted}", value)

    return hook


def _url(value: object, _: object) -> str:
    url = _string(value).strip()
    if url and not url.startswith(("http://", "https://")):
        raise _Refused('expected an http:// or https:// URL (or "" for the provider\'s default)', value)
    return url


def _secret(value: object, _: object) -> str:
    text = _string(value)
    # whitespace or control characters would end up in an HTTP header
    if text and (not text.isprintable() or any(ch.isspace() for ch in text)):
        raise _Concealed()
    return text


# the keys whose values need more than their type and `Accepts` say
_OWN_RULES: dict[str, Callable[[bool], Hook]] = {
    "allow_unix_sockets": _socket_paths,
    "network_commands": _network_commands,
    "credentials": lambda _: _credentials,
    "deny_read": _read_paths,
    "allow_read": _read_paths,
    "base_url": lambda _: _url,
}
