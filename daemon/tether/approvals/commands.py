"""Shell commands as the approval rules see them: simple commands and their prefixes.

`npm test && git status | head` is three simple commands; a rule must cover each one.
Constructs whose effect a prefix cannot describe — command substitution, redirection
to files, background jobs, subshells — make a command *opaque*: no allow rule approves
it (the user is asked), though deny rules still apply to the parts that can be seen.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

_SEPARATORS = {"&&", "||", ";", "|", ";;", "\n"}
_OPAQUE_TOKENS = {"&", ">", ">>", "<", "<<", "<<<", ">&", "&>", "(", ")", "|&"}


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    parts: tuple[tuple[str, ...], ...]  # each simple command's words
    opaque: bool  # something a prefix rule cannot vouch for

    def prefixes(self) -> list[str]:
        return [command_prefix(words) for words in self.parts if words]


def parse_command(command: str) -> ParsedCommand:
    opaque = "$(" in command or "`" in command or "<(" in command or ">(" in command
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes
        return ParsedCommand((tuple(command.split()),), True)
    parts: list[tuple[str, ...]] = []
    current: list[str] = []
    for token in tokens:
        if token in _SEPARATORS:
            if current:
                parts.append(tuple(current))
            current = []
        elif token in _OPAQUE_TOKENS or token.startswith((">", "<", "&")):
            opaque = True
            if token in ("&", "(", ")"):
                if current:
                    parts.append(tuple(current))
                current = []
        else:
            current.append(token)
    if current:
        parts.append(tuple(current))
    # `FOO=1 cmd`: the assignment is not the program
    cleaned = tuple(tuple(_strip_assignments(p)) for p in parts)
    return ParsedCommand(tuple(p for p in cleaned if p), opaque)


def _strip_assignments(words: tuple[str, ...]) -> list[str]:
    out = list(words)
    while out and "=" in out[0] and not out[0].startswith("=") and out[0].split("=", 1)[0].isidentifier():
        out.pop(0)
    return out


# Programs whose first argument is a subcommand that changes what they do; for anything
# else the program alone is the prefix (`echo testing` -> `echo`).
SUBCOMMAND_PROGRAMS = frozenset({
    "git", "npm", "pnpm", "yarn", "bun", "deno", "npx", "cargo", "go", "docker", "podman",
    "kubectl", "helm", "pip", "pip3", "poetry", "uv", "pdm", "hatch", "make", "just", "gradle",
    "mvn", "dotnet", "rustup", "gh", "terraform", "brew", "apt", "apt-get", "conda", "mix",
    "bundle", "rake", "composer", "swift", "zig", "nix", "tox", "nox",
})


def command_prefix(words: tuple[str, ...] | list[str]) -> str:
    """Program plus subcommand: `npm test`, `git status`; `ls -la` is just `ls`."""
    if not words:
        return ""
    program = words[0].rsplit("/", 1)[-1] if "/" in words[0] else words[0]
    if program.startswith("python") and len(words) > 2 and words[1] == "-m":
        return f"{program} -m {words[2]}"  # `python -m pytest`
    if program in SUBCOMMAND_PROGRAMS and len(words) > 1 and not words[1].startswith("-"):
        return f"{program} {words[1]}"
    return program


def words_start_with(words: tuple[str, ...], prefix: str) -> bool:
    wanted = prefix.split()
    if not wanted:
        return False
    have = list(words)
    if have and "/" in have[0]:
        have[0] = have[0].rsplit("/", 1)[-1]
    return have[: len(wanted)] == wanted
