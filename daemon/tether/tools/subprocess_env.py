"""The environment a tool's subprocess gets: the daemon's, minus secrets.

Owns: the rule that API keys, tokens, passwords and cloud credentials never reach a
child process. Must not: add anything (a tool that needs a variable names it).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping

SECRET_PATTERNS: tuple[str, ...] = (
    "*_API_KEY",
    "*_APIKEY",
    "*_TOKEN",
    "*_SECRET*",
    "*PASSWORD*",
    "*_CREDENTIALS",
    "AWS_*",
    "TETHER_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
)


def is_secret(name: str) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in SECRET_PATTERNS)


def scrubbed_env(
    env: Mapping[str, str] | None = None, allow: Iterable[str] = ()
) -> dict[str, str]:
    """`env` (default: this process's) without secret-looking variables, except `allow`."""
    source = os.environ if env is None else env
    allowed = set(allow)
    return {k: v for k, v in source.items() if k in allowed or not is_secret(k)}
