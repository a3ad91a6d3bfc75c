"""Programs that run other code, and how each is looked through.

`env`, `command`, `builtin`, `exec`, `nice`, `ionice`, `nohup`, `time`, `timeout`,
`stdbuf`, `setsid`, `busybox`, `toybox`, `xargs`, `watch`, `flock`, `find -exec`, `sudo`,
`doas`, `chroot`, `systemd-run` run the command in their arguments; `sh|bash|... -c`,
`env -S`, `eval`, `trap`, `su|runuser|script -c` run a script given as a string (parsed
again when it is literal); `source`, a shell or interpreter reading its input, inline
interpreter code (`python -c`, `node -e`, an awk program calling `system`), `alias`,
`at`, `crontab` run code the rules cannot see.

Owns: one handler per such program, recording parts and reasons on a `PartFinder`.
Must not: parse shell text (`shell_grammar.py`) or match rules (`rules.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from .parts import UNKNOWN_ARGS, CommandPart, PartFinder, brief
from .shell_grammar import Word

__all__ = ["RESERVED", "Handler", "handler_for"]

# (finder, program basename, the part's words, nesting depth)
Handler = Callable[[PartFinder, str, list[Word], int], None]


# ---- options ------------------------------------------------------------------------


def _skip_options(words: Sequence[Word], start: int, with_value: frozenset[str] = frozenset()) -> int:
    """Index of the first word after the options (`--` ends them)."""
    i = start
    while i < len(words):
        value = words[i].value
        if value is None or not value.startswith(("-", "+")) or value in ("-", "+"):
            return i
        if value == "--":
            return i + 1
        i += 2 if value in with_value else 1
    return i


def _wrapper(with_value: str = "", positionals: int = 0, *, pure: bool = True, why: str = "") -> Handler:
    options = frozenset(with_value.split())

    def handle(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
        if why:
            found.not_simple(why.format(program=program))
        at = _skip_options(words, 1, options) + positionals
        found.run_inner(words, at, depth, pure=pure)

    return handle


def _env(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    at = 1
    while at < len(words):
        value = words[at].value
        if value in ("-S", "--split-string") and at + 1 < len(words):
            found.not_simple("`env -S`")
            rest = words[at + 1 :]
            found.parts.append(CommandPart(tuple(words), wrapper=True))
            found.read_literal(_joined(rest), "an `env -S` string", depth)
            return
        if value is not None and value.startswith("--split-string="):
            found.cannot_see(f"`{brief(words[at].source)}`")
        at = _skip_options(words, at, frozenset({"-u", "--unset", "-C", "--chdir"}))
        if at < len(words) and words[at].value is not None and re.match(r"[A-Za-z_]\w*=", words[at].value or ""):
            found.not_simple(f"environment set by env (`{brief(words[at].source)}`)")
            at += 1
            continue
        break
    found.run_inner(words, at, depth)


def _command(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    at = _skip_options(words, 1)
    if any(w.value in ("-v", "-V") for w in words[1:at]):
        found.parts.append(CommandPart(tuple(words)))  # a lookup: nothing runs
        return
    found.run_inner(words, at, depth)


def _xargs(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    at = _skip_options(words, 1, frozenset(
        "-a --arg-file -d --delimiter -E -I -L -n --max-args -P --max-procs -s --max-chars "
        "--process-slot-var".split()))
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
            while end < len(words) and words[end].value not in (";", "+"):
                end += 1
            inner = [UNKNOWN_ARGS if w.value is not None and "{}" in w.value else w for w in words[i + 1 : end]]
            found.expand(inner, depth + 1)
            i = end
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
    if not inline:
        found.parts.append(CommandPart(tuple(words)))
        script = words[at] if at < len(words) else None
        if script is None or "s" in "".join(o for o in options if not o.startswith("--")) or _is_input(script):
            found.cannot_see(f"`{program}` reading commands from its input")
        return
    found.parts.append(CommandPart(tuple(words), wrapper=True))
    found.read_literal(words[at] if at < len(words) else None, f"a `{program} -c` script", depth)


def _eval(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.not_simple("`eval`")
    found.parts.append(CommandPart(tuple(words), wrapper=True))
    found.read_literal(_joined(words[1:]), "an `eval` string", depth)


def _watch(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    at = _skip_options(words, 1, frozenset({"-n", "--interval", "-q", "--equexit"}))
    found.parts.append(CommandPart(tuple(words), wrapper=at < len(words)))
    found.read_literal(_joined(words[at:]), "a `watch` command", depth)


def _flock(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    for i, w in enumerate(words):
        if w.value in ("-c", "--command"):
            found.parts.append(CommandPart(tuple(words), wrapper=True))
            found.read_literal(words[i + 1] if i + 1 < len(words) else None, "a `flock -c` command", depth)
            return
    at = _skip_options(words, 1, frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"})) + 1
    found.run_inner(words, at, depth)


def _source(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.not_simple(f"`{program}` runs a file's commands in this shell")
    found.parts.append(CommandPart(tuple(words)))
    if len(words) > 1 and (words[1].value is None or not words[1].literal or _is_input(words[1])):
        found.cannot_see(f"`{program}` of `{brief(words[1].source)}`")


def _is_input(word: Word) -> bool:
    """A script argument that is really the command's input (`-`, `/dev/stdin`, `/dev/fd/0`)."""
    return word.value is not None and (word.value == "-" or word.value.startswith(("/dev/", "/proc/")))


def _trap(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.not_simple("`trap`")
    found.parts.append(CommandPart(tuple(words), wrapper=len(words) > 1))
    found.read_literal(words[1] if len(words) > 1 else None, "a `trap` command", depth)


def _dash_c(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    """`su -c CMD`, `runuser -c CMD`, `script -qc CMD`: CMD is run by a shell."""
    found.parts.append(CommandPart(tuple(words)))
    for i, w in enumerate(words[1:], 1):
        value = w.value or ""
        short = value.startswith("-") and not value.startswith("--") and "c" in value
        if value in ("--command", "--session-command") or short:
            found.read_literal(words[i + 1] if i + 1 < len(words) else None, f"a `{program} -c` command", depth)
        elif value.startswith("--command="):
            found.cannot_see(f"`{brief(w.source)}`")


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


# ---- interpreters given code inline ----------------------------------------------------

_INLINE_FLAGS: dict[str, frozenset[str]] = {
    "node": frozenset({"-e", "--eval", "-p", "--print"}), "nodejs": frozenset({"-e", "--eval", "-p", "--print"}),
    "bun": frozenset({"-e", "--eval", "-p", "--print"}), "perl": frozenset({"-e", "-E"}),
    "ruby": frozenset({"-e"}), "php": frozenset({"-r"}), "lua": frozenset({"-e"}), "luajit": frozenset({"-e"}),
    "Rscript": frozenset({"-e"}), "osascript": frozenset({"-e"}),
    "pwsh": frozenset({"-c", "-command", "-Command"}), "powershell": frozenset({"-c", "-command", "-Command"}),
}
_PYTHON = re.compile(r"(python|pypy)[0-9.]*$")
_AWK = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})


def _interpreter(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    flags = frozenset({"-c"}) if _PYTHON.match(program) else _INLINE_FLAGS[program]
    letters = {f[1] for f in flags if len(f) == 2}
    options = [w.value or "" for w in words[1:]]
    if not any(o in ("-V", "--version", "-h", "--help", "-v") for o in options) and (
        all(o.startswith("-") and o not in ("-", "-m") for o in options) or any(_is_input(w) for w in words[1:])
    ):
        found.cannot_see(f"`{program}` reading code from its input")
        return
    for w in words[1:]:
        value = w.value
        if value is None or not value.startswith("-") or value in ("-", "-m", "--"):
            return  # the script, a module or stdin: what follows is its arguments
        cluster = not value.startswith("--") and value[1:].isalpha() and bool(letters & set(value[1:]))
        if value.split("=", 1)[0] in flags or cluster:
            found.cannot_see(f"inline {program} code (`{program} {value}`)")
            return


def _awk(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    at = _skip_options(words, 1, frozenset({"-F", "-v", "-f", "--file", "--assign", "--field-separator"}))
    if any(w.value in ("-f", "--file") for w in words[1:at]) or at >= len(words):
        return
    code = words[at]
    if code.value is None or not code.literal or re.search(r"system|getline|\|", code.value):
        found.cannot_see(f"an {program} program that can run commands (`{brief(code.source)}`)")


def handler_for(program: str) -> Handler | None:
    """How `program` runs other code, if it does."""
    return _HANDLERS.get(program) or (_interpreter if _PYTHON.match(program) else None)


# reserved words the grammar can take for a command name (`! { git push; }`)
RESERVED = frozenset({"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until",
                       "coproc", "esac", "(", ")"})
_HANDLERS: dict[str, Handler] = {
    "env": _env, "command": _command, "builtin": _wrapper(), "nohup": _wrapper(), "setsid": _wrapper(),
    "exec": _wrapper("-a", pure=False, why="`exec`"), "nice": _wrapper("-n --adjustment"),
    "ionice": _wrapper("-c --class -n --classdata -p --pid -P --pgid -u --uid"),
    "time": _wrapper("-f --format -o --output"), "timeout": _wrapper("-s --signal -k --kill-after", 1),
    "stdbuf": _wrapper("-i -o -e --input --output --error"), "busybox": _wrapper(),
    "sudo": _wrapper("-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role "
                     "-t --type -U --other-user -T --command-timeout -R --chroot", pure=False),
    "doas": _wrapper("-u -C", pure=False), "chroot": _wrapper("--userspec --groups", 1, pure=False),
    "xargs": _xargs, "find": _find, "eval": _eval, "watch": _watch, "flock": _flock,
    "source": _source, ".": _source, "trap": _trap,
    "su": _dash_c, "runuser": _dash_c, "script": _dash_c, "toybox": _wrapper(),
    "systemd-run": _wrapper("-u --unit -p --property -E --setenv --uid --gid -M --machine --description "
                            "--slice -H --host", pure=False),
    "alias": _unseeable("`{program}` changes what later words run"),
    "at": _unseeable("`{program}` runs commands later, from its input"),
    "batch": _unseeable("`{program}` runs commands later, from its input"),
    "crontab": _unseeable("`{program}` runs commands later"),
    **{name: _shell for name in ("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh")},
    **{name: _interpreter for name in _INLINE_FLAGS},
    **{name: _awk for name in _AWK},
}
