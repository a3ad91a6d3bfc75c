"""Shell commands as the approval rules see them: every part that may run, and two verdicts.

Owns: the parts (grammar, cross-scan and program handlers together; where readings differ, the union), the
verdicts *plain* and *fully seen* (SPEC §5.9, decision 0004), and the prefix an "always" answer stores.
Must not: match rules (`rules.py`) or decide (`gate.py`).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field, replace

from .parts import UNKNOWN_ARGS, CommandPart, brief
from .runners import RESERVED, handler_for
from .shell_grammar import Word, parse_shell
from .shell_scan import command_starts, dash_differences

__all__ = ["CommandPart", "ParsedCommand", "command_prefix", "parse_command", "words_start_with"]

# wrappers and nested scripts (`nice sh -c 'timeout 5 …'`), each one level; past this the
# rest is not looked into (and the command is not fully seen)
_MAX_DEPTH = 32
# Variables whose value a program runs as code (`GIT_SSH_COMMAND=… git fetch`,
# `BASH_ENV=… bash -c true`), set by an assignment, `env` or `export`: the deny rules
# cannot see that code, so a command setting one is not fully seen.
_CODE_VARIABLES = re.compile(
    r"(?<![\w$])(GIT_SSH_COMMAND|GIT_SSH|GIT_EXTERNAL_DIFF|GIT_CONFIG_COUNT|GIT_CONFIG_PARAMETERS|"
    r"GIT_CONFIG_(?:KEY|VALUE)_\d+|GIT_EDITOR|GIT_SEQUENCE_EDITOR|GIT_PAGER|GIT_ASKPASS|GIT_PROXY_COMMAND|"
    r"GIT_EXEC_PATH|GIT_DIR|GIT_TEMPLATE_DIR|SSH_ASKPASS|PAGER|MANPAGER|EDITOR|VISUAL|BASH_ENV|ENV|"
    r"PROMPT_COMMAND|SHELLOPTS|BASHOPTS|LD_PRELOAD|LD_AUDIT|LD_LIBRARY_PATH|PERL5OPT|PERL5LIB|RUBYOPT|"
    r"NODE_OPTIONS|PYTHONSTARTUP|PYTHONPATH|PYTHONHOME|PYTHONINSPECT|LESSOPEN|LESSCLOSE|LESSKEY\w*|LESS|"
    r"MANOPT|TAR_OPTIONS|ZIPOPT|RSYNC_RSH|RSYNC_CONNECT_PROG)="
)
_MAX_GUESSES = 256  # places a wrapper whose options are not modelled may start its command
_MAX_REASONS = 10  # why a command is not plain or not fully seen: the first few are enough


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    parts: tuple[CommandPart, ...]
    not_plain: tuple[str, ...] = ()  # why no allow rule may approve it; () when plain
    unseen: tuple[str, ...] = ()  # what the deny rules cannot see; () when fully seen
    # files a redirection, `tee`, `sort -o` or `uniq` writes, as written (relative to the
    # command's directory): an allow rule approves only new, inert files (`write_targets.py`)
    writes: tuple[str, ...] = ()

    @property
    def plain(self) -> bool:
        return not self.not_plain

    @property
    def fully_seen(self) -> bool:
        return not self.unseen

    @property
    def own_parts(self) -> tuple[CommandPart, ...]:
        """The parts a rule must cover (wrappers are covered through what they run)."""
        return tuple(p for p in self.parts if not p.wrapper and not p.maybe and p.program is not None)

    def prefixes(self) -> list[str]:
        return [command_prefix(p.texts) for p in self.own_parts]


def parse_command(command: str) -> ParsedCommand:
    found = _Found()
    found.read(command, 0)
    if "\\\n" in command:
        # the grammar reads a backslash-newline inside a word as a word break, /bin/sh joins
        # the lines: both readings are checked (deny: either; allow: both)
        found.read(command.replace("\\\n", ""), 0)
    parts = tuple(dict.fromkeys(found.parts))  # the same part twice is one part
    return ParsedCommand(parts, tuple(found.not_plain), tuple(found.unseen), tuple(dict.fromkeys(found.writes)))


@dataclass(slots=True)
class _Found:
    parts: list[CommandPart] = field(default_factory=list)
    not_plain: list[str] = field(default_factory=list)
    unseen: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    guesses: int = 0

    def read(self, script: str, depth: int) -> None:
        if depth > _MAX_DEPTH:
            self.cannot_see(f"commands nested more than {_MAX_DEPTH} levels deep")
            return
        view = parse_shell(script)
        for why in view.not_plain:
            self.not_simple(why)
        for why in view.unseen:
            self.cannot_see(why)
        self.writes.extend(view.writes)
        for why in dash_differences(script):
            self.cannot_see(why)
        runs = _CODE_VARIABLES.search(script)
        if runs:
            self.cannot_see(f"`{runs.group(1)}` set to a command the program runs")
        first = len(self.parts)
        for simple in view.commands:
            if simple.assignments:
                self.not_simple(f"a variable assignment (`{brief(simple.assignments[0])}`)")
            for word in simple.words:
                if not word.literal and not any(c in word.source for c in "$`"):  # brace expansion
                    self.not_simple(f"`{brief(word.source)}` is not a literal word")
                    break
            self.expand(list(simple.words), depth)
        # a program the shell would start where the grammar sees none: the two disagree,
        # so it counts as a part that may run with any arguments
        seen = {part.program for part in self.parts[first:]}
        for words in command_starts(script):
            program = words[0].rsplit("/", 1)[-1]
            if program not in seen:
                seen.add(program)
                self.not_simple(f"the shell may run `{brief(program)}` where the grammar sees no command")
                self.expand([*(Word(w, w, True) for w in words), UNKNOWN_ARGS], depth)

    def not_simple(self, why: str) -> None:
        if len(self.not_plain) < _MAX_REASONS and why not in self.not_plain:
            self.not_plain.append(why)

    def writes_to(self, word: Word, program: str) -> None:
        if word.value is None or not word.literal or word.glob:
            self.not_simple(f"`{program}` writes to `{brief(word.source)}`, a file only running it can tell")
        elif word.value.startswith(("/", "~")) or posixpath.normpath(word.value).split("/")[0] == "..":
            if word.value not in ("/dev/null", "/dev/stdout", "/dev/stderr"):
                self.not_simple(f"`{program}` writes outside the workspace (`{brief(word.source)}`)")
        else:
            self.writes.append(word.value)

    def cannot_see(self, why: str) -> None:
        self.not_simple(why)
        if len(self.unseen) < _MAX_REASONS and why not in self.unseen:
            self.unseen.append(why)

    def expand(self, words: list[Word], depth: int) -> None:
        """Record the part `words` and whatever it runs."""
        if not words:
            return
        if depth > _MAX_DEPTH:
            self.parts.append(CommandPart(tuple(words)))
            self.cannot_see(f"commands nested more than {_MAX_DEPTH} levels deep")
            return
        head = words[0]
        if head.value is None or not head.literal or head.glob:
            self.parts.append(CommandPart(tuple(words)))
            self.cannot_see(f"`{brief(head.source)}` in command position")
            return
        program = head.value.rsplit("/", 1)[-1]
        if program in RESERVED:
            # the grammar took a reserved word for a command (`! { git push; }`)
            self.not_simple(f"`{program}`")
            self.expand(words[1:], depth + 1)
            return
        handler = handler_for(program)
        if handler is None:
            self.parts.append(CommandPart(tuple(words)))
        else:
            handler(self, program, words, depth)

    def guess(self, words: list[Word], depth: int) -> None:
        if self._out_of_guesses():
            return
        first = len(self.parts)
        self.expand(words, depth + 1)
        self._mark_guessed(first)

    def guess_script(self, word: Word, depth: int) -> None:
        if self._out_of_guesses():
            return
        first = len(self.parts)
        self.read_literal(word, "a script", depth)
        self._mark_guessed(first)

    def _out_of_guesses(self) -> bool:
        # guesses nest (`strace taskset -c 0 …`): past a budget the rest is not looked into
        self.guesses += 1
        if self.guesses > _MAX_GUESSES:
            self.cannot_see(f"more than {_MAX_GUESSES} guesses at what wrappers run")
            return True
        return False

    def _mark_guessed(self, first: int) -> None:
        self.parts[first:] = [replace(part, maybe=True) for part in self.parts[first:]]

    def run_inner(self, words: list[Word], inner_at: int | None, depth: int, *, pure: bool = True) -> None:
        has_inner = inner_at is not None and inner_at < len(words)
        self.parts.append(CommandPart(tuple(words), wrapper=pure and has_inner))
        if has_inner:
            assert inner_at is not None
            self.expand(words[inner_at:], depth + 1)

    def read_literal(self, word: Word | None, what: str, depth: int) -> None:
        if word is None:
            return
        if word.value is None or not word.literal:
            self.cannot_see(f"{what} that is not a literal string (`{brief(word.source)}`)")
        else:
            self.read(word.value, depth + 1)


# ---- prefixes ------------------------------------------------------------------------

# Programs whose first argument is a subcommand that changes what they do; for anything
# else the program alone is the prefix (`echo testing` -> `echo`).
SUBCOMMAND_PROGRAMS = frozenset(
    {
        "git",
        "npm",
        "pnpm",
        "yarn",
        "bun",
        "deno",
        "npx",
        "cargo",
        "go",
        "docker",
        "podman",
        "kubectl",
        "helm",
        "pip",
        "pip3",
        "poetry",
        "uv",
        "pdm",
        "hatch",
        "make",
        "just",
        "gradle",
        "mvn",
        "dotnet",
        "rustup",
        "gh",
        "terraform",
        "brew",
        "apt",
        "apt-get",
        "conda",
        "mix",
        "bundle",
        "rake",
        "composer",
        "swift",
        "zig",
        "nix",
        "tox",
        "nox",
    }
)


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
