"""Programs that run other code (`env`, `xargs`, `find -exec`, `sudo`, `sh -c`, ...), and how each is looked through.

Owns: one handler per such program, recording parts and reasons on a `PartFinder` (guessed parts for wrappers
whose options are not modelled), and the table from program name to handler (list: decision 0004).
Must not: parse shell text (`shell_grammar.py`) or match rules (`rules.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from .copiers import COPIERS
from .git_options import git
from .inline_code import (
    AWK,
    COMMAND_OPTIONS,
    INLINE_FLAGS,
    PYTHON,
    awk,
    command_options,
    interpreter,
    is_input,
    make,
    python,
    sed,
    skip_options,
)
from .parts import UNKNOWN_ARGS, CommandPart, PartFinder, brief
from .shell_grammar import Word
from .tool_options import TOOL_OPTIONS, WRITERS

__all__ = ["RESERVED", "Handler", "handler_for"]

# (finder, program basename, the part's words, nesting depth)
Handler = Callable[[PartFinder, str, list[Word], int], None]


def _wrapper(with_value: str = "", positionals: int = 0, *, pure: bool = True, why: str = "") -> Handler:
    options = frozenset(with_value.split())

    def handle(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
        if why:
            found.not_simple(why.format(program=program))
        at = skip_options(words, 1, options) + positionals
        found.run_inner(words, at, depth, pure=pure)

    return handle


def _env(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    at = 1
    while at < len(words):
        word = words[at]
        value = word.value
        if value is None or not word.literal:
            if at > 1 or (value or "-").startswith("-"):
                # an option only running it can tell (`env $OPTS git push`)
                found.cannot_see(f"`env` with `{brief(word.source)}`")
            break
        if value == "--":
            at += 1
            break
        if value == "-":  # `env - cmd` is `env -i cmd`
            at += 1
            continue
        if re.match(r"[A-Za-z_]\w*=", value):
            found.not_simple(f"environment set by env (`{brief(word.source)}`)")
            at += 1
            continue
        if not value.startswith("-"):
            break
        split, takes_next, values = _env_option(value)
        if split is not None or takes_next:
            _env_split(found, words, at, split if not takes_next else None, depth)
            return
        at += 1 + values
    found.run_inner(words, at, depth)


def _env_option(value: str) -> tuple[Word | None, bool, int]:
    """One `env` option word: the `-S` string attached to it (or None), whether the `-S`
    string is the next word instead, and how many later words are the option's value."""
    if value.startswith("--"):
        name, eq, attached = value.partition("=")
        # GNU takes any unambiguous abbreviation: `--split`, `--sp` are `--split-string`
        if len(name) > 2 and "--split-string".startswith(name):
            return (Word(attached, attached, True), False, 0) if eq else (None, True, 0)
        if not eq and any(long.startswith(name) for long in ("--unset", "--chdir")):
            return None, False, 1  # the value is the next word
        return None, False, 0
    for k, letter in enumerate(value[1:], 1):
        if letter in "uC":
            return None, False, 0 if value[k + 1 :] else 1
        if letter == "S":  # `-S 'cmd'`, `-S'cmd'`, `-iS 'cmd'`
            rest = value[k + 1 :]
            return (Word(rest, rest, True), False, 0) if rest else (None, True, 0)
    return None, False, 0


def _env_split(found: PartFinder, words: list[Word], at: int, attached: Word | None, depth: int) -> None:
    """`env -S <string> ...` with the option at `at`: the string is `attached` to the option,
    else the next word; it is split into words and read as a command."""
    found.not_simple("`env -S`")
    after = at + (1 if attached is not None else 2)
    string = attached if attached is not None else (words[at + 1] if at + 1 < len(words) else None)
    found.parts.append(CommandPart(tuple(words), wrapper=True))
    if string is None:
        return
    if string.value is not None and re.search(r"[\\$]", string.value):
        # env -S has its own escapes and `${VAR}`: not what the shell grammar reads
        found.cannot_see(f"an `env -S` string with escapes or variables (`{brief(string.source)}`)")
    found.read_literal(_joined([string, *words[after:]]), "an `env -S` string", depth)


def _command(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    at = skip_options(words, 1)
    if any(w.value in ("-v", "-V") for w in words[1:at]):
        found.parts.append(CommandPart(tuple(words)))  # a lookup: nothing runs
        return
    found.run_inner(words, at, depth)


def _xargs(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    at = skip_options(
        words,
        1,
        frozenset(
            "-a --arg-file -d --delimiter -E -I -L -n --max-args -P --max-procs -s --max-chars "
            "--process-slot-var".split()
        ),
    )
    inner = words[at:] or [Word("echo", "echo", True)]
    replace = _xargs_replace(words[1:at])
    if replace:  # `-I {}`: each input line goes where `{}` is
        inner = [Word(w.source, None, False) if w.value is not None and replace in w.value else w for w in inner]
    found.parts.append(CommandPart(tuple(words), wrapper=True))
    found.expand([*inner, UNKNOWN_ARGS], depth + 1)


def _xargs_replace(options: Sequence[Word]) -> str:
    for i, w in enumerate(options):
        value = w.value or ""
        if value == "-I" and i + 1 < len(options):
            return options[i + 1].value or "{}"
        if value.startswith("-I"):
            return value[2:]
        if value.startswith("-i") or value == "--replace":
            return value[2:] or "{}"
        if value.startswith("--replace="):
            return value.split("=", 1)[1] or "{}"
    return ""


def _find(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    i = 1
    while i < len(words):
        if words[i].value in ("-exec", "-execdir", "-ok", "-okdir"):
            end = i + 1
            # `;` ends it, and `+` only right after `{}` (`-exec xargs -E + touch x \;`)
            while end < len(words) and not (
                words[end].value == ";" or (words[end].value == "+" and words[end - 1].value == "{}")
            ):
                end += 1
            inner = [UNKNOWN_ARGS if w.value is not None and "{}" in w.value else w for w in words[i + 1 : end]]
            found.expand(inner, depth + 1)
            i = end
        elif words[i].value in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(words):
            found.writes_to(words[i + 1], program)  # the list of files goes there
        i += 1


def _shell(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    at = 1
    while at < len(words) and (words[at].value or "x")[:1] in "-+" and words[at].value not in ("-", "+"):
        value = words[at].value or ""
        if value == "--":
            at += 1
            break
        # `-o pipefail`, `-euo pipefail`, `--rcfile f`: the next word is the option's value
        at += 2 if value in ("--rcfile", "--init-file") or (not value.startswith("--") and value[-1] in "oO") else 1
    options = [w.value or "" for w in words[1:at]]
    inline = any(o[:1] in "-+" and not o.startswith("--") and "c" in o for o in options)
    attached = [_after_c(o) for o in options if not o.startswith("--") and _after_c(o)]
    for text in attached:  # `sh -c'cmd'`: whatever follows the `c` may be read as the script
        found.read_literal(Word(text, text, True), f"a `{program} -c` script", depth)
    if not inline:
        found.parts.append(CommandPart(tuple(words)))
        script = words[at] if at < len(words) else None
        if script is None or "s" in "".join(o for o in options if not o.startswith("--")) or is_input(script):
            found.cannot_see(f"`{program}` reading commands from its input")
        return
    found.parts.append(CommandPart(tuple(words), wrapper=True))
    found.read_literal(words[at] if at < len(words) else None, f"a `{program} -c` script", depth)


def _eval(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.not_simple("`eval`")
    found.parts.append(CommandPart(tuple(words), wrapper=True))
    found.read_literal(_joined(words[1:]), "an `eval` string", depth)


def _watch(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    at = skip_options(words, 1, frozenset({"-n", "--interval", "-q", "--equexit"}))
    found.parts.append(CommandPart(tuple(words), wrapper=at < len(words)))
    found.read_literal(_joined(words[at:]), "a `watch` command", depth)


def _flock(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    for i, w in enumerate(words):
        if w.value in ("-c", "--command"):
            found.parts.append(CommandPart(tuple(words), wrapper=True))
            found.read_literal(words[i + 1] if i + 1 < len(words) else None, "a `flock -c` command", depth)
            return
    at = skip_options(words, 1, frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"})) + 1
    found.run_inner(words, at, depth)


def _source(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.not_simple(f"`{program}` runs a file's commands in this shell")
    found.parts.append(CommandPart(tuple(words)))
    if len(words) > 1 and (words[1].value is None or not words[1].literal or is_input(words[1])):
        found.cannot_see(f"`{program}` of `{brief(words[1].source)}`")


def _trap(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.not_simple("`trap`")
    at = 2 if len(words) > 1 and words[1].value == "--" else 1  # `trap -- 'cmd' EXIT`
    found.parts.append(CommandPart(tuple(words), wrapper=len(words) > at))
    found.read_literal(words[at] if len(words) > at else None, "a `trap` command", depth)


def _dash_c(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    """`su -c CMD`, `runuser -c CMD`, `script -qc CMD`: CMD is run by a shell."""
    found.parts.append(CommandPart(tuple(words)))
    what = f"a `{program} -c` command"
    command = False
    for i, w in enumerate(words[1:], 1):
        value = w.value or ""
        short = value.startswith("-") and not value.startswith("--") and "c" in value
        if value in ("--command", "--session-command") or short:
            command = True
            attached = _after_c(value) if short else ""
            if attached:  # `script -qc'cmd'`: the text after `c` is the command
                found.read_literal(Word(attached, attached, True), what, depth)
            else:
                found.read_literal(words[i + 1] if i + 1 < len(words) else None, what, depth)
        elif value.startswith(("--command=", "--session-command=")):
            command = True
            text = value.split("=", 1)[1]
            found.read_literal(Word(w.source, text, True) if w.literal else w, what, depth)
    if not command:
        found.cannot_see(f"`{program}` without `-c` runs a shell reading its input")


def _after_c(option: str) -> str:
    """`-qctouch x` -> `touch x`: the text after the `c` of a short-option cluster."""
    if not option.startswith("-") or option.startswith("--") or "c" not in option:
        return ""
    return option[option.index("c") + 1 :]


def _unseeable(why: str) -> Handler:
    def handle(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
        found.parts.append(CommandPart(tuple(words)))
        found.cannot_see(why.format(program=program))

    return handle


def _joined(words: Sequence[Word]) -> Word | None:
    if not words:
        return None
    if any(w.value is None or not w.literal for w in words):
        return Word(" ".join(w.source for w in words), None, False)
    return Word(" ".join(w.source for w in words), " ".join(w.value or "" for w in words), True)


def _guess(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    """A program that runs a command in its arguments, with options this module does not
    model (`taskset -c 0 cmd`, `unshare -r cmd`, `sg group 'cmd'`): every later word may be
    where the command starts, and a word with blanks may be a script."""
    found.not_simple(f"`{program}` runs a command this reading cannot place")
    found.parts.append(CommandPart(tuple(words)))
    for i in range(1, len(words)):
        found.guess(words[i:], depth)
        word = words[i]
        if word.value is not None and word.literal and any(c in word.value for c in " \t\n;&|$`"):
            found.guess_script(word, depth)


def handler_for(program: str) -> Handler | None:
    """How `program` runs other code, if it does."""
    if program in _HANDLERS:
        return _HANDLERS[program]
    if PYTHON.match(program):
        return python
    if _LOADER.match(program):
        return _guess
    return None


_LOADER = re.compile(r"ld(-linux.*|-musl.*)?\.so.*$")  # `/lib64/ld-linux-x86-64.so.2 /bin/touch x`
# programs that run a command in their arguments, with options not modelled here
GUESSED_WRAPPERS = frozenset(
    """
taskset chrt prlimit setarch linux32 linux64 i386 x86_64 uname26 strace ltrace unshare setpriv sg
nsenter firejail bwrap fakeroot fakechroot proot valgrind numactl cgexec runcon chpst pkexec
torsocks proxychains proxychains4 unbuffer rlwrap catchsegv faketime chronic ifne dbus-run-session
dbus-launch xvfb-run daemonize start-stop-daemon schroot setuidgid softlimit envuidgid envdir sem
parallel hyperfine entr watchexec nsjail minijail0 capsh perf gdb lldb ssh-agent expect tsp nocache
eatmydata trickle caffeinate
""".split()
)
_SHELLS = tuple(
    "sh bash rbash zsh dash ksh ksh93 mksh lksh oksh pdksh ash posh yash fish csh tcsh elvish xonsh nu rc es hush msh".split()
)


# reserved words the grammar can take for a command name (`! { git push; }`)
RESERVED = frozenset(
    {"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "coproc", "esac", "(", ")"}
)
_HANDLERS: dict[str, Handler] = {
    "env": _env,
    "command": _command,
    "builtin": _wrapper(),
    "nohup": _wrapper(),
    "setsid": _wrapper(),
    "exec": _wrapper("-a", pure=False, why="`exec`"),
    "nice": _wrapper("-n --adjustment"),
    "ionice": _wrapper("-c --class -n --classdata -p --pid -P --pgid -u --uid"),
    "time": _wrapper("-f --format -o --output"),
    "timeout": _wrapper("-s --signal -k --kill-after", 1),
    "stdbuf": _wrapper("-i -o -e --input --output --error"),
    "busybox": _wrapper(),
    "sudo": _wrapper(
        "-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role "
        "-t --type -U --other-user -T --command-timeout -R --chroot",
        pure=False,
    ),
    "doas": _wrapper("-u -C", pure=False),
    "chroot": _wrapper("--userspec --groups", 1, pure=False),
    "xargs": _xargs,
    "find": _find,
    "eval": _eval,
    "watch": _watch,
    "flock": _flock,
    "source": _source,
    ".": _source,
    "trap": _trap,
    "su": _dash_c,
    "runuser": _dash_c,
    "script": _dash_c,
    "toybox": _wrapper(),
    "systemd-run": _wrapper(
        "-u --unit -p --property -E --setenv --uid --gid -M --machine --description --slice -H --host", pure=False
    ),
    "alias": _unseeable("`{program}` changes what later words run"),
    "at": _unseeable("`{program}` runs commands later, from its input"),
    "batch": _unseeable("`{program}` runs commands later, from its input"),
    "crontab": _unseeable("`{program}` runs commands later"),
    **{name: _shell for name in _SHELLS},
    **{name: interpreter for name in INLINE_FLAGS},
    **{name: awk for name in AWK},
    **{name: _guess for name in GUESSED_WRAPPERS},
    **{name: command_options for name in COMMAND_OPTIONS},
    **TOOL_OPTIONS,
    **WRITERS,
    **COPIERS,
    "sed": sed,
    "gsed": sed,
    "make": make,
    "gmake": make,
    "git": git,
}
