"""The environment a tool's subprocess gets: API keys, tokens, passwords and cloud credentials never reach it.

Owns: `command_env` (a minimal core set, quiet settings, the private temp dir, plus the user's `allow_env`
globs), `scrubbed_env` for other subprocesses, and `is_secret` (also used for warnings).
Must not: add anything beyond the fixed core set, or take `allow_env` from anywhere but the user's settings.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

SECRET_PATTERNS: tuple[str, ...] = (
    "*_API_KEY",
    "*_APIKEY",
    "API_KEY",
    "APIKEY",
    "*_TOKEN",
    "*_TOKEN_*",
    "TOKEN",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*_PASS",
    "*_PWD",
    "*PRIVATE_KEY*",
    "*_CREDENTIALS",
    "*_CREDENTIAL",
    "*_AUTH",
    "*_AUTH_*",
    "*_PAT",
    "*_KEY",
    "*DATABASE_URL*",
    "*_DSN",
    "AWS_*",
    "AZURE_*",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "TETHER_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
)

# What every command gets, when the daemon has it (Codex's shell_environment_policy core).
CORE_VARIABLES: tuple[str, ...] = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ")
CORE_PREFIXES: tuple[str, ...] = ("LC_",)
# Keep tools that page or colour their output from waiting for a terminal or emitting escapes.
QUIET_ENV: dict[str, str] = {"TERM": "dumb", "PAGER": "cat", "GIT_PAGER": "cat", "NO_COLOR": "1"}
_FALLBACK_PATH = "/usr/local/bin:/usr/bin:/bin"


def _glob_parts(pattern: str) -> tuple[bool, str, bool]:
    core = pattern.strip("*")
    assert "*" not in core and "?" not in core and "[" not in core, pattern  # only * at the ends
    return pattern.startswith("*"), core, pattern.endswith("*")


# SECRET_PATTERNS as (any prefix, text, any suffix): matched with str methods, not
# fnmatch's regular expressions (the daemon checks its whole environment at start, §5.13)
_SECRET_GLOBS = tuple(_glob_parts(pattern) for pattern in SECRET_PATTERNS)


def is_secret(name: str) -> bool:
    upper = name.upper()
    for head, core, tail in _SECRET_GLOBS:
        if head and tail:
            found = core in upper
        elif head:
            found = upper.endswith(core)
        else:
            found = upper.startswith(core) if tail else upper == core
        if found:
            return True
    return False


def scrubbed_env(env: Mapping[str, str] | None = None, allow: Iterable[str] = ()) -> dict[str, str]:
    """`env` (default: this process's) without secret-looking variables, except `allow`."""
    source = os.environ if env is None else env
    allowed = set(allow)
    return {k: v for k, v in source.items() if k in allowed or not is_secret(k)}


def command_env(
    allow: Iterable[str] = (), tmpdir: str | None = None, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The minimal environment of a command: the core variables of `env` (default: this
    process's), the quiet settings, TMPDIR, and every variable named (or matched, with
    `*`/`?` globs) by `allow`."""
    import fnmatch  # here: the daemon's start imports this module (is_secret), not re

    source = os.environ if env is None else env
    patterns = tuple(allow)
    out: dict[str, str] = {}
    for key, value in source.items():
        if (
            key in CORE_VARIABLES
            or key.startswith(CORE_PREFIXES)
            or any(fnmatch.fnmatchcase(key, pattern) for pattern in patterns)
        ):
            out[key] = value
    out.setdefault("PATH", _FALLBACK_PATH)
    out |= QUIET_ENV
    if tmpdir is not None:
        out["TMPDIR"] = tmpdir
    return out
