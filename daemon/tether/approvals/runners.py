"""Programs that run other code, and how each is looked through.

`env`, `command`, `builtin`, `exec`, `nice`, `ionice`, `nohup`, `time`, `timeout`,
`stdbuf`, `setsid`, `busybox`, `toybox`, `xargs`, `watch`, `flock`, `find -exec`, `sudo`,
`doas`, `chroot`, `systemd-run` run the command in their arguments; `sh|bash|... -c`
(also `-c'cmd'`), `env -S` (also `-S'cmd'`, `-iS`, `--split`), `eval`, `trap`,
`su|runuser|script -c` run a script given as a string (parsed again when it is literal);
`source`, a shell or interpreter reading its input, inline interpreter code (`python -c`,
`python -m timeit`, `node -e`, an awk program calling `system`, a program file read from
stdin), a `sed` script with `e` or `s///e`, `make --eval`, options that run a command
(`tar --to-command`, `split --filter`, `ssh -o ProxyCommand`), `git -c`, `alias`, `at`,
`crontab` run code the rules cannot see. Wrappers whose options are not modelled
(`taskset`, `unshare`, `strace`, `sg`, ... `GUESSED_WRAPPERS`) are not plain, and every
later word is taken as a possible start of the command they run (a *guessed* part: a deny
rule hitting it is a possible hit).

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
            # `;` ends it, and `+` only right after `{}` (`-exec xargs -E + touch x \;`)
            while end < len(words) and not (
                words[end].value == ";" or (words[end].value == "+" and words[end - 1].value == "{}")
            ):
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
    attached = [_after_c(o) for o in options if not o.startswith("--") and _after_c(o)]
    for text in attached:  # `sh -c'cmd'`: whatever follows the `c` may be read as the script
        found.read_literal(Word(text, text, True), f"a `{program} -c` script", depth)
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
    at = _skip_options(words, 1, frozenset({"-F", "-v", "-f", "--file", "--assign", "--field-separator",
                                             "-E", "--exec", "-i", "--include", "-e", "--source"}))
    options = words[1:at]
    from_options = False  # the program is given by `-f`/`-e` (not as the first operand)
    for i in range(len(options)):
        given = _option_value(options, i, ("-f", "--file", "-E", "--exec", "-i", "--include"))
        if given is not None:
            # `-i`/`--include` loads a library: the program is still the first operand
            from_options = from_options or not (options[i].value or "").startswith(("-i", "--i"))
            if given.value is None or _is_input(given):
                found.cannot_see(f"an {program} program read from `{brief(given.source)}`")
                return
        code = _option_value(options, i, ("-e", "--source"))
        if code is not None:
            from_options = True
            if code.value is None or not code.literal or re.search(r"system|getline|\|", code.value):
                found.cannot_see(f"an {program} program that can run commands (`{brief(code.source)}`)")
                return
    if from_options or at >= len(words):
        return
    code = words[at]
    if code.value is None or not code.literal or re.search(r"system|getline|\|", code.value):
        found.cannot_see(f"an {program} program that can run commands (`{brief(code.source)}`)")


def _option_value(options: Sequence[Word], i: int, names: Sequence[str]) -> Word | None:
    """The value of option `options[i]` when it is one of `names`: `-f x`, `-fx`, `--file=x`."""
    value = options[i].value or ""
    for name in names:
        if value == name:
            return options[i + 1] if i + 1 < len(options) else Word("", "", True)
        if name.startswith("--") and value.startswith(name + "="):
            rest = value[len(name) + 1 :]
            return Word(rest, rest, options[i].literal)
        if not name.startswith("--") and value.startswith(name) and len(value) > len(name):
            rest = value[len(name) :]
            return Word(rest, rest, options[i].literal)
    return None


def _long_option(value: str, names: Sequence[str]) -> bool:
    """Whether `value` is one of the long options `names`, or an abbreviation of one."""
    given = value.split("=", 1)[0]
    return given.startswith("--") and len(given) > 2 and any(name.startswith(given) for name in names)


# `sed`: the `e` command and the `s///e` flag run shell commands
_SED_ADDRESS = re.compile(r"\s*(?:\d+|\$|/(?:[^/\\\n]|\\.)*/[IM]*|\\(.)(?:(?!\1).)*\1[IM]*)?")


def _sed(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    scripts, files = _sed_scripts(words)
    for file in files:
        if file.value is None or _is_input(file):
            found.cannot_see(f"a `{program}` script read from `{brief(file.source)}`")
            return
    for script in scripts:
        if script.value is None or not script.literal or _sed_runs(script.value):
            found.cannot_see(f"a `{program}` script that may run commands (`{brief(script.source)}`)")
            return


def _sed_scripts(words: list[Word]) -> tuple[list[Word], list[Word]]:
    """A sed command's scripts (`-e`, `--expression`, else its first operand) and script
    files (`-f`, `--file`)."""
    scripts: list[Word] = []
    files: list[Word] = []
    operand = False  # without `-e`/`-f`, the first operand is the script
    i, options_done = 1, False
    while i < len(words):
        w, value = words[i], words[i].value
        i += 1
        if options_done or value is None or not value.startswith("-") or value == "-":
            if not operand and not scripts and not files:
                scripts.append(w)
            operand = True
        elif value == "--":
            options_done = True
        else:
            arg, kind, used = _sed_option(w, value, words[i] if i < len(words) else None)
            i += used
            if arg is not None and kind:
                (scripts if kind == "e" else files).append(arg)
    return scripts, files


def _sed_option(w: Word, value: str, following: Word | None) -> tuple[Word | None, str, int]:
    """One sed option word `w`: the script ("e") or script file ("f") it names, if any,
    and how many later words it takes (`following` is the next word)."""
    if value.startswith("--"):
        name, eq, given = value.partition("=")
        for long, kind in (("--expression", "e"), ("--file", "f")):
            if _long_option(name, (long,)):
                return (Word(given, given, w.literal), kind, 0) if eq else (following, kind, 1)
        return None, "", 0
    for k, letter in enumerate(value[1:], 1):
        if letter in "efl":  # the rest of the word, or the next word, is its value
            rest = value[k + 1 :]
            kind = "" if letter == "l" else letter
            return (Word(rest, rest, w.literal), kind, 0) if rest else (following, kind, 1)
        if letter == "i":  # `-i.bak`: a suffix, attached
            break
    return None, "", 0


def _sed_runs(script: str) -> bool:
    """Whether a sed script may use `e` or `s///e` (over-approximates on anything odd)."""
    i, n = 0, len(script)
    while i < n:
        i = _sed_after_address(script, i)
        if i >= n:
            return False
        cmd = script[i]
        i += 1
        if cmd in ";\n{} \t":
            continue
        if cmd == "e":
            return True
        if cmd in "sy":
            end = _sed_substitution_end(script, i, cmd)
            if end is None:
                return True
            i = end
        elif cmd in "aicrRwWbtT:vqQlLF=dDgGhHnNpPxz#":
            i = _sed_argument_end(script, i, cmd)
        else:
            return True  # a command this reading does not know
    return False


def _sed_after_address(script: str, i: int) -> int:
    """Where the command starts after the address (range, `!`) at `i`."""
    n = len(script)
    match = _SED_ADDRESS.match(script, i)
    i = match.end() if match else i
    if i < n and script[i] == ",":
        match = _SED_ADDRESS.match(script, i + 1)
        i = match.end() if match else i + 1
    while i < n and script[i] in " \t!":
        i += 1
    return i


def _sed_substitution_end(script: str, i: int, cmd: str) -> int | None:
    """Where the `s` or `y` command whose delimiter is at `i` ends (after its flags), or None
    when it may run a command (`s///e`) or is not read to its end."""
    n = len(script)
    if i >= n:
        return None
    delim = script[i]
    if delim in "\\\n":
        return None
    parts, j = 0, i + 1
    while j < n and parts < 2:
        if script[j] == "\\":
            j += 2
            continue
        if script[j] == delim:
            parts += 1
        j += 1
    if parts < 2:
        return None
    flags_end = j
    while flags_end < n and script[flags_end] not in ";\n}":
        flags_end += 1
    flags = script[j:flags_end]
    if cmd == "s" and ("e" in flags or "w" in flags and "e" in flags[flags.index("w"):]):
        return None
    return flags_end


def _sed_argument_end(script: str, i: int, cmd: str) -> int:
    """Where the argument of `cmd` (from `i`) ends: text, a file name or a label runs to the
    end of the line (a, i, c, r, w, labels and comments), a branch to `;`; else nothing."""
    n = len(script)
    if cmd in "aicrRwW#:":
        end = script.find("\n", i)
        return n if end < 0 else end + 1
    if cmd in "btT":
        while i < n and script[i] not in ";\n":
            i += 1
    return i


def _make(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    options = words[1:]
    for i, w in enumerate(options):
        value = w.value
        if value is None:
            continue
        given = _option_value(options, i, ("-f", "--file", "--makefile"))
        if given is not None and (given.value is None or _is_input(given)):
            found.cannot_see(f"a makefile read from `{brief(given.source)}`")
        if value == "-E" or (value.startswith("-E") and not value.startswith("--")) or _long_option(value, ("--eval",)):
            found.cannot_see(f"make code given inline (`{brief(w.source)}`)")


# options that run a command given as their value (GNU long options may be abbreviated)
_COMMAND_OPTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "tar": (("--checkpoint-action", "--to-command", "--use-compress-program", "--rsh-command",
             "--info-script", "--new-volume-script"), "IF"),
    "split": (("--filter",), ""),
    "rsync": (("--rsh",), "e"),
    "sort": (("--compress-program",), ""),
}


def _command_options(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    longs, letters = _COMMAND_OPTIONS[program]
    for i, w in enumerate(words[1:], 1):
        value = w.value
        if value is None:
            continue
        short = value.startswith("-") and not value.startswith("--") or (program == "tar" and i == 1)
        if _long_option(value, longs) or (short and letters and any(c in value for c in letters)):
            found.cannot_see(f"`{program}` running a command given in `{brief(w.source)}`")
            return


def _ssh(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    for w in words[1:]:
        value = w.value or ""
        lowered = value.lower()
        # `-o ProxyCommand=…`, `-oLocalCommand=…`, `Match exec …`, `-F config` (which may say so)
        config = value.startswith("-") and not value.startswith("--") and "F" in value[1:]
        if "command" in lowered or "match" in lowered or config:
            found.cannot_see(f"`{program}` may run a local command (`{brief(w.source)}`)")
            return


def _git(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    for w in words[1:]:
        value = w.value
        if value is None or not value.startswith("-"):
            return  # the subcommand
        if value in ("-c", "--config-env") or value.startswith(("--config-env=", "--exec-path=", "-c")):
            # `-c core.fsmonitor=…`, `-c help.autocorrect=1 psuh`: configuration runs commands
            found.cannot_see(f"git configuration given on the command line (`{brief(w.source)}`)")
            return


def _python(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    _interpreter(found, program, words, depth)
    for i, w in enumerate(words[1:], 1):
        value = w.value or ""
        if value == "-m" or (value.startswith("-m") and len(value) > 2):
            module = value[2:] or (words[i + 1].value if i + 1 < len(words) else "") or "$?"
            if module.split(".")[0] in _CODE_MODULES or module == "$?":
                found.cannot_see(f"`{program} -m {module}` runs code given inline or from its input")
            return
        if not value.startswith("-") or value in ("-", "--"):
            return


# python modules that run code given as an argument or read from input
_CODE_MODULES = frozenset({"timeit", "cProfile", "profile", "trace", "pdb", "code", "runpy", "doctest",
                           "IPython", "idlelib", "asyncio", "ptpython", "bpython"})


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
    if _PYTHON.match(program):
        return _python
    if _LOADER.match(program):
        return _guess
    return None


_LOADER = re.compile(r"ld(-linux.*|-musl.*)?\.so.*$")  # `/lib64/ld-linux-x86-64.so.2 /bin/touch x`
# programs that run a command in their arguments, with options not modelled here
GUESSED_WRAPPERS = frozenset({
    "taskset", "chrt", "prlimit", "setarch", "linux32", "linux64", "i386", "x86_64", "uname26",
    "strace", "ltrace", "unshare", "setpriv", "sg", "nsenter", "firejail", "bwrap", "fakeroot",
    "fakechroot", "proot", "valgrind", "numactl", "cgexec", "runcon", "chpst", "pkexec", "torsocks",
    "proxychains", "proxychains4", "unbuffer", "rlwrap", "catchsegv", "faketime", "chronic", "ifne",
    "dbus-run-session", "dbus-launch", "xvfb-run", "daemonize", "start-stop-daemon", "schroot",
    "setuidgid", "softlimit", "envuidgid", "envdir", "sem", "parallel", "hyperfine", "entr",
    "watchexec", "nsjail", "minijail0", "capsh", "perf", "gdb", "lldb", "ssh-agent", "expect", "tsp",
    "nocache", "eatmydata", "trickle", "caffeinate",
})
_SHELLS = ("sh", "bash", "rbash", "zsh", "dash", "ksh", "ksh93", "mksh", "lksh", "oksh", "pdksh", "ash",
           "posh", "yash", "fish", "csh", "tcsh", "elvish", "xonsh", "nu", "rc", "es", "hush", "msh")


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
    **{name: _shell for name in _SHELLS},
    **{name: _interpreter for name in _INLINE_FLAGS},
    **{name: _awk for name in _AWK},
    **{name: _guess for name in GUESSED_WRAPPERS},
    **{name: _command_options for name in _COMMAND_OPTIONS},
    "sed": _sed, "gsed": _sed, "make": _make, "gmake": _make, "git": _git,
    "ssh": _ssh, "scp": _ssh, "sftp": _ssh,
}
