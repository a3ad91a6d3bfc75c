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
    # `FOO=1 cmd`, `env cmd`, `git -C dir push`, `sh -c '...'`: rules see the real command
    cleaned: list[tuple[str, ...]] = []
    for words in parts:
        for normal in _normalise(list(words)):
            if normal:
                cleaned.append(tuple(normal))
    return ParsedCommand(tuple(cleaned), opaque)


_WRAPPERS = {"env", "command", "exec", "nice", "time", "nohup", "timeout", "stdbuf", "xargs"}
_SHELLS = {"sh", "bash", "zsh", "dash", "ksh"}
# git's global options that come before the subcommand, and whether they take a value
_GIT_GLOBALS = {"-C": True, "-c": True, "--git-dir": True, "--work-tree": True, "--namespace": True,
                "--no-pager": False, "-P": False, "--bare": False, "--no-replace-objects": False}


def _normalise(words: list[str], depth: int = 0) -> list[list[str]]:
    """The simple command(s) a part really runs. Best effort: this guards against the
    common spellings, it is not a sandbox (a determined command can hide anything)."""
    words = _strip_assignments(tuple(words))
    while words:
        program = words[0].rsplit("/", 1)[-1]
        if program in _WRAPPERS:
            words = _strip_assignments(tuple(_drop_options(words[1:], takes_value={"-n", "-u", "-s", "-k"})))
            if program == "timeout" and words and words[0][:1].isdigit():
                words = words[1:]
            continue
        if program in _SHELLS and depth < 3 and "-c" in words[1:]:
            script = words[words.index("-c") + 1] if words.index("-c") + 1 < len(words) else ""
            inner = parse_command(script)
            return [list(p) for p in inner.parts] or [words]
        if program == "git":
            rest, i = words[1:], 0
            while i < len(rest) and rest[i].startswith("-"):
                name = rest[i].split("=", 1)[0]
                i += 2 if _GIT_GLOBALS.get(name) and "=" not in rest[i] else 1
            return [["git", *rest[i:]]]
        return [words]
    return []


def _drop_options(words: list[str], takes_value: set[str]) -> list[str]:
    out = list(words)
    while out and out[0].startswith("-"):
        flag = out.pop(0)
        if flag in takes_value and out:
            out.pop(0)
    return out


def _strip_assignments(words: tuple[str, ...] | list[str]) -> list[str]:
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
    if program in SUBCOMMAND_PROGRAMS and len(words) > 1:
        if not words[1].startswith("-"):
            return f"{program} {words[1]}"
        # `npm --prefix x test`: which word is the subcommand is unclear, so an "always"
        # answer covers exactly this command rather than every npm command
        return " ".join([program, *words[1:]])
    return program


def words_start_with(words: tuple[str, ...], prefix: str) -> bool:
    wanted = prefix.split()
    if not wanted:
        return False
    have = list(words)
    if have and "/" in have[0]:
        have[0] = have[0].rsplit("/", 1)[-1]
    return have[: len(wanted)] == wanted
