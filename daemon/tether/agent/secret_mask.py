"""Masking text that looks like a secret in a tool result, before the model sees it.

Owns: the patterns and `mask_secrets` (`[masked: looks like ...]`), once per tool result,
each pattern tried only when one of its literals is present (docs/decisions/0011-agent.md).
Must not: mask identifiers, calls, paths or placeholders (`token = get_token()`, `${TOKEN}`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["MaskedText", "mask_secrets"]


@dataclass(frozen=True, slots=True)
class _Pattern:
    what: str  # "an AWS access key"
    literals: tuple[str, ...]  # lower-case; the pattern runs only when one is in the text
    regex: re.Pattern[str]
    group: int = 0  # the part replaced (the value of an assignment, not its key)
    accept: Callable[[str], bool] | None = None
    word_start: bool = True  # the match must start a word (`xAKIA...` is not a key)


def _mixed(value: str) -> bool:
    """Letters and digits both: a key, not a word (`sk-learn-is-a-library-name`)."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
# lower-case words joined by `/`, `_` or `-`, one slash at least, ending in a short hex id:
# an LSP progress token (`tether/turn_74008768a59edf77`), not a key (no more than 64 bits)
_NAMED_ID = re.compile(r"[a-z]+(?:[/_-][a-z]+)*[/_-][0-9a-f]{4,16}")


def _literal_value(value: str) -> bool:
    """A long literal, not a dotted name (`self.auth_token_v2`), a named id
    (`tether/turn_74008768a59edf77`) or a placeholder (`xxxx...`)."""
    return (
        _mixed(value)
        and not _DOTTED.fullmatch(value)
        and len(set(value.lower())) >= 6
        and not ("/" in value and _NAMED_ID.fullmatch(value))
        and not value.startswith(("/", "~", "./", "../", "$"))
        and "://" not in value
    )  # paths, URLs


# Each regex starts with a literal (re finds those fast); "starts a word" is checked after.
_PATTERNS: tuple[_Pattern, ...] = (
    _Pattern(
        "a private key",
        ("private key-----",),
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----|[A-Za-z0-9+/=\s:,-]*)"
        ),
    ),
    _Pattern(
        "an AWS access key",
        ("akia", "asia", "abia", "acca"),
        re.compile(r"A(?:KIA|SIA|BIA|CCA)[0-9A-Z]{16}(?![0-9A-Za-z])"),
    ),
    _Pattern(
        "an AWS secret key",
        ("aws_secret",),
        re.compile(r"aws_secret_access_key[\"']?\s*[=:]\s*[\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])", re.I),
        group=1,
    ),
    _Pattern(
        "a GitHub token",
        ("gh", "github_pat_"),
        re.compile(r"gh[pousr]_[A-Za-z0-9]{36,255}(?!\w)|github_pat_[A-Za-z0-9_]{22,255}(?!\w)"),
    ),
    _Pattern("an Anthropic API key", ("sk-ant-",), re.compile(r"sk-ant-[A-Za-z0-9_-]{20,}")),
    _Pattern("an OpenAI API key", ("sk-",), re.compile(r"sk-(?!ant-)[A-Za-z0-9_-]{20,}"), accept=_mixed),
    _Pattern(
        "a Slack token",
        ("xox", "hooks.slack.com"),
        re.compile(r"xox[abposr]-[A-Za-z0-9-]{10,}|https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"),
    ),
    _Pattern("a Google API key", ("aiza",), re.compile(r"AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])")),
    _Pattern("a Stripe key", ("_live_",), re.compile(r"[sr]k_live_[0-9A-Za-z]{24,}")),
    _Pattern(
        "a password in a URL", ("://",), re.compile(r"://[^/\s:@\"']+:([^/\s@\"']{3,})@"), group=1, word_start=False
    ),
    _Pattern("a JWT", ("eyj",), re.compile(r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
    # written bare too (`ENV NPM_TOKEN npm_...` in a Dockerfile, a CI log): their own shape
    _Pattern(
        "a package registry token",
        ("npm_", "pypi-ageichlwas5vcmc"),
        re.compile(r"npm_[A-Za-z0-9]{36}(?!\w)|pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
        accept=_mixed,
    ),
    _Pattern("a GitLab token", ("glpat-",), re.compile(r"glpat-[A-Za-z0-9_-]{20,}")),
    _Pattern("a Hugging Face token", ("hf_",), re.compile(r"hf_[A-Za-z0-9]{30,}(?!\w)"), accept=_mixed),
)
# `password = "..."`, `GITHUB_TOKEN=...`, `"api_key": "..."`: run on the lower-cased text
# (a case-insensitive regex is ten times slower); the value is judged in its own case. A
# backslash ends a value: `"max_tokens = 4096\ntemperature = 0.2"` is an escaped string, not a key.
_ASSIGNMENT = _Pattern(
    "a password or token",
    ("pass", "secret", "token", "key", "auth", "credential"),
    re.compile(
        r"(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential|auth)[a-z0-9_.-]{0,30}[\"']?[ \t]*[=:][ \t]*"
        r"[\"']?([^\s\"'`,;(){}\[\]<>\\]{16,})(?![^\s\"'`,;\\])"
    ),
    group=1,
    accept=_literal_value,
    word_start=False,
)


@dataclass(frozen=True, slots=True)
class MaskedText:
    text: str
    masked: tuple[str, ...]  # what each mask was ("a GitHub token"), in pattern order, once each
    count: int = 0

    def notice(self) -> str:
        kinds = ", ".join(self.masked)
        return (
            f"[Tether masked {self.count} secret{'s' if self.count != 1 else ''} in this tool result before "
            f'the model saw it ({kinds}); turn this off with mask_secrets = "off" in your user config]'
        )


def mask_secrets(text: str) -> MaskedText:
    """`text` with every secret-looking part replaced by `[masked: looks like WHAT]`."""
    lowered = text.lower()
    spans: list[tuple[int, int, int, str]] = []  # start, rank (the specific pattern first), end, what
    for rank, pattern in enumerate((*_PATTERNS, _ASSIGNMENT)):
        if any(literal in lowered for literal in pattern.literals):
            spans += [
                (start, rank, end, what)
                for start, end, what in _found(pattern, text, lowered if pattern is _ASSIGNMENT else text)
            ]
    if not spans:
        return MaskedText(text, ())
    spans.sort()
    out: list[str] = []
    kept: list[tuple[int, int, str]] = []
    at = 0
    for start, _, end, what in spans:
        if start < at:
            continue  # inside an earlier mask (a key inside a private key block)
        out += [text[at:start], f"[masked: looks like {what}]"]
        kept.append((start, end, what))
        at = end
    out.append(text[at:])
    return MaskedText("".join(out), tuple(dict.fromkeys(what for _, _, what in kept)), len(kept))


def _found(pattern: _Pattern, text: str, searched: str) -> list[tuple[int, int, str]]:
    if len(searched) != len(text):  # lower() changed a length (rare non-ASCII): search the text itself
        searched = text
        regex = re.compile(pattern.regex.pattern, re.I)
    else:
        regex = pattern.regex
    spans = []
    for match in regex.finditer(searched):
        start, end = match.span(pattern.group)
        head = match.start()
        if pattern.word_start and head and (text[head - 1].isalnum() or text[head - 1] == "_"):
            continue
        if pattern.accept is None or pattern.accept(text[start:end]):
            spans.append((start, end, pattern.what))
    return spans
