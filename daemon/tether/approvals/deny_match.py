"""How a deny rule matches one part of a command: loosely, so spellings do not slip by.

Owns: that comparison: program by basename, flags as a set of letters with each program's synonyms, paths
normalised, git's subcommand (every pushing one is `push`); an unknowable word makes a *possible* hit.
Must not: parse shell text (`commands.py`) or decide (`gate.py`). Why loose: docs/decisions/0004-approvals.md.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Literal

from .git_options import as_deny_rules_see
from .shell_grammar import Word

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["deny_match", "normalise_path"]

# long options as the short letter they mean, per program (GNU also takes any
# unambiguous abbreviation: `--rec` is `--recursive`)
_LONG: dict[str, dict[str, str]] = {
    "rm": {"--recursive": "r", "--force": "f", "--dir": "d", "--verbose": "v", "--interactive": "i"},
    "cp": {"--recursive": "r", "--force": "f"},
    "chmod": {"--recursive": "R"},
    "chown": {"--recursive": "R"},
    "git": {"--force": "f", "--delete": "d", "--all": "a"},
}
# short letters a program treats as the same
_SAME: dict[str, dict[str, str]] = {"rm": {"R": "r"}, "cp": {"R": "r"}}
# git's global options before the subcommand that take a value
_GIT_VALUE = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--attr-source"}
)


@dataclass(frozen=True, slots=True)
class _Shape:
    program: str
    subcommand: str | None  # git: the word after its global options ("?" when unknown)
    flags: frozenset[str]
    positionals: frozenset[str]
    unknown: bool  # a word only running it can tell
    globs: tuple[str, ...]


def deny_match(pattern: str, words: Sequence[Word]) -> Literal["definite", "possible"] | None:
    rule_words = [Word(w, w, True) for w in pattern.split()]
    rule, part = _shape(rule_words), _shape(list(words))
    if rule is None or part is None or rule.program != part.program:
        return None
    if rule.subcommand is not None:
        if part.subcommand == "?":
            return "possible"
        if part.subcommand != rule.subcommand:
            return None
    missing_flags = rule.flags - part.flags
    missing = rule.positionals - part.positionals
    if not missing_flags and not missing:
        return "definite"
    if part.unknown:
        return "possible"
    if all(any(_glob_may_be(g, f) for g in part.globs) for f in (*missing_flags, *missing)):
        return "possible"
    return None


def _glob_may_be(pattern: str, word: str) -> bool:
    """Whether an unquoted glob could expand to `word` (it never expands across `/`)."""
    if ("/" in word and "/" not in pattern) or (word.startswith("~") and not pattern.startswith("~")):
        return False  # a glob never crosses `/`, and `~` is expanded before globbing
    return fnmatchcase(word, pattern) or fnmatchcase(word, normalise_path(pattern))


def _shape(words: list[Word]) -> _Shape | None:
    if not words or words[0].value is None:
        return None
    program = words[0].value.rsplit("/", 1)[-1]
    rest = words[1:]
    subcommand: str | None = None
    if program == "git":
        i = 0
        aliased = False
        while i < len(rest) and (rest[i].value or "").startswith("-"):
            option = rest[i].value or ""
            if option in ("-c", "--config-env") and i + 1 < len(rest):
                aliased = aliased or (rest[i + 1].value or "alias.").lower().startswith("alias.")
            elif option.lower().startswith("--config-env="):
                aliased = aliased or option.lower().startswith("--config-env=alias.")
            i += 2 if option in _GIT_VALUE else 1
        if i < len(rest):
            # `git -c alias.p=push p`: the subcommand is whatever the alias says
            subcommand = rest[i].value if rest[i].value is not None and not aliased else "?"
            rest = rest[i + 1 :]
            # what pushes is one subcommand to a deny rule (`git send-pack` is `git push`),
            # and a subcommand pushing through programs of its own may be any
            subcommand = as_deny_rules_see(subcommand) if subcommand is not None else None
        else:
            rest = []
    long_names, same = _LONG.get(program, {}), _SAME.get(program, {})
    flags: set[str] = set()
    positionals: set[str] = set()
    globs: list[str] = []
    unknown, options_done = False, False
    for word in rest:
        value = word.value
        if value is None:
            unknown = True
            continue
        if word.glob:
            globs.append(value)
        if not options_done and value == "--":
            options_done = True
        elif not options_done and value.startswith("--") and len(value) > 2:
            flags.add(_long_flag(value.split("=", 1)[0], long_names))
        elif not options_done and value.startswith("-") and len(value) > 1:
            flags.update(same.get(ch, ch) for ch in value[1:])
        else:
            positionals.add(normalise_path(value))
    return _Shape(program, subcommand, frozenset(flags), frozenset(positionals), unknown, tuple(globs))


def _long_flag(name: str, long_names: dict[str, str]) -> str:
    if name in long_names:
        return long_names[name]
    matches = {letter for long, letter in long_names.items() if len(name) > 3 and long.startswith(name)}
    return matches.pop() if len(matches) == 1 else name


def normalise_path(value: str) -> str:
    """`//`, `/.`, `/./`, `/tmp/..`, a trailing `/` removed; `~/x/..` is `~`."""
    if value == "~" or value.startswith("~/"):
        tail = posixpath.normpath("/" + value[2:]) if len(value) > 2 else "/"
        tail = "/" + tail.lstrip("/")
        return "~" if tail == "/" else "~" + tail
    if value.startswith("/"):
        return "/" + posixpath.normpath(value).lstrip("/")
    return value
