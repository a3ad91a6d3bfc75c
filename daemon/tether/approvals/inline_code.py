"""Programs that run code the rules cannot see when it is given inline or named by an option.

Owns: the handlers for interpreters' inline code (`python -c`, `node -e`, awk `system`, sed `e`,
`make --eval`, `split --filter`) and the option readers the wrappers in `runners.py` share.
Must not: parse shell text (`shell_grammar.py`), match rules (`rules.py`) or build the handler table.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .parts import CommandPart, PartFinder, brief
from .shell_grammar import Word

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "AWK",
    "COMMAND_OPTIONS",
    "INLINE_FLAGS",
    "PYTHON",
    "awk",
    "command_options",
    "interpreter",
    "is_input",
    "long_option",
    "make",
    "option_value",
    "python",
    "sed",
    "skip_options",
]


def skip_options(words: Sequence[Word], start: int, with_value: frozenset[str] = frozenset()) -> int:
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


def is_input(word: Word) -> bool:
    """A script argument that is really the command's input (`-`, `/dev/stdin`, `/dev/fd/0`)."""
    return word.value is not None and (word.value == "-" or word.value.startswith(("/dev/", "/proc/")))


# ---- interpreters given code inline ----------------------------------------------------

INLINE_FLAGS: dict[str, frozenset[str]] = {
    "node": frozenset({"-e", "--eval", "-p", "--print"}),
    "nodejs": frozenset({"-e", "--eval", "-p", "--print"}),
    "bun": frozenset({"-e", "--eval", "-p", "--print"}),
    "perl": frozenset({"-e", "-E"}),
    "ruby": frozenset({"-e"}),
    "php": frozenset({"-r"}),
    "lua": frozenset({"-e"}),
    "luajit": frozenset({"-e"}),
    "Rscript": frozenset({"-e"}),
    "osascript": frozenset({"-e"}),
    "pwsh": frozenset({"-c", "-command", "-Command"}),
    "powershell": frozenset({"-c", "-command", "-Command"}),
}
PYTHON = re.compile(r"(python|pypy)[0-9.]*$")
AWK = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})


def interpreter(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    flags = frozenset({"-c"}) if PYTHON.match(program) else INLINE_FLAGS[program]
    letters = {f[1] for f in flags if len(f) == 2}
    options = [w.value or "" for w in words[1:]]
    if not any(o in ("-V", "--version", "-h", "--help", "-v") for o in options) and (
        all(o.startswith("-") and o not in ("-", "-m") for o in options) or any(is_input(w) for w in words[1:])
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


def awk(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    at = skip_options(
        words,
        1,
        frozenset(
            {
                "-F",
                "-v",
                "-f",
                "--file",
                "--assign",
                "--field-separator",
                "-E",
                "--exec",
                "-i",
                "--include",
                "-e",
                "--source",
            }
        ),
    )
    options = words[1:at]
    from_options = False  # the program is given by `-f`/`-e` (not as the first operand)
    for i in range(len(options)):
        given = option_value(options, i, ("-f", "--file", "-E", "--exec", "-i", "--include"))
        if given is not None:
            # `-i`/`--include` loads a library: the program is still the first operand
            from_options = from_options or not (options[i].value or "").startswith(("-i", "--i"))
            if given.value is None or is_input(given):
                found.cannot_see(f"an {program} program read from `{brief(given.source)}`")
                return
        code = option_value(options, i, ("-e", "--source"))
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


def option_value(options: Sequence[Word], i: int, names: Sequence[str]) -> Word | None:
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


def long_option(value: str, names: Sequence[str]) -> bool:
    """Whether `value` is one of the long options `names`, or an abbreviation of one."""
    given = value.split("=", 1)[0]
    return given.startswith("--") and len(given) > 2 and any(name.startswith(given) for name in names)


# `sed`: the `e` command and the `s///e` flag run shell commands
_SED_ADDRESS = re.compile(r"\s*(?:\d+|\$|/(?:[^/\\\n]|\\.)*/[IM]*|\\(.)(?:(?!\1).)*\1[IM]*)?")


def sed(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    scripts, files, operands = _sed_scripts(words)
    for file in files:
        if file.value is None or is_input(file):
            found.cannot_see(f"a `{program}` script read from `{brief(file.source)}`")
            return
        found.not_simple(f"a `{program}` script file (`{brief(file.source)}`) may write files")
    for script in scripts:
        effect = "runs" if script.value is None or not script.literal else _sed_effect(script.value)
        if effect == "runs":
            found.cannot_see(f"a `{program}` script that may run commands (`{brief(script.source)}`)")
            return
        if effect == "writes":
            found.not_simple(f"a `{program}` script that writes a file (`{brief(script.source)}`)")
    if any(_in_place(w.value or "") for w in words[1:]):
        for operand in operands:  # `sed -i` rewrites each file it is given
            found.writes_to(operand, program)


def _in_place(option: str) -> bool:
    """`-i`, `-ni.bak`, `--in-place`, `--in` (before a letter taking a value: `-ei` is a script)."""
    if option.startswith("--"):
        return long_option(option, ("--in-place",))
    if not option.startswith("-"):
        return False
    letters = option[1:]
    cut = min((letters.index(c) for c in "efl" if c in letters), default=len(letters))
    return "i" in letters[:cut]


def _sed_scripts(words: list[Word]) -> tuple[list[Word], list[Word], list[Word]]:
    """A sed command's scripts (`-e`, `--expression`, else its first operand), script
    files (`-f`, `--file`) and the files it reads (its other operands)."""
    scripts: list[Word] = []
    files: list[Word] = []
    operands: list[Word] = []
    operand = False  # without `-e`/`-f`, the first operand is the script
    i, options_done = 1, False
    while i < len(words):
        w, value = words[i], words[i].value
        i += 1
        if options_done or value is None or not value.startswith("-") or value == "-":
            if not operand and not scripts and not files:
                scripts.append(w)
            else:
                operands.append(w)
            operand = True
        elif value == "--":
            options_done = True
        else:
            arg, kind, used = _sed_option(w, value, words[i] if i < len(words) else None)
            i += used
            if arg is not None and kind:
                (scripts if kind == "e" else files).append(arg)
    return scripts, files, operands


def _sed_option(w: Word, value: str, following: Word | None) -> tuple[Word | None, str, int]:
    """One sed option word `w`: the script ("e") or script file ("f") it names, if any,
    and how many later words it takes (`following` is the next word)."""
    if value.startswith("--"):
        name, eq, given = value.partition("=")
        for long, kind in (("--expression", "e"), ("--file", "f")):
            if long_option(name, (long,)):
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


def _sed_effect(script: str) -> str:
    """ "runs" when a sed script may use `e` or `s///e` (over-approximates on anything odd),
    "writes" when it may write a file (`w`, `W`, `s///w`), else ""."""
    i, n = 0, len(script)
    writes = False
    while i < n:
        i = _sed_after_address(script, i)
        if i >= n:
            break
        cmd = script[i]
        i += 1
        if cmd in ";\n{} \t":
            continue
        if cmd == "e":
            return "runs"
        writes = writes or cmd in "wW"
        if cmd in "sy":
            end = _sed_substitution_end(script, i, cmd)
            if end is None:
                return "runs"
            writes = writes or (cmd == "s" and "w" in script[i:end].rsplit(script[i], 1)[-1])
            i = end
        elif cmd in "aicrRwWbtT:vqQlLF=dDgGhHnNpPxz#":
            i = _sed_argument_end(script, i, cmd)
        else:
            return "runs"  # a command this reading does not know
    return "writes" if writes else ""


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
    if cmd == "s" and ("e" in flags or ("w" in flags and "e" in flags[flags.index("w") :])):
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


def make(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    options = words[1:]
    for i, w in enumerate(options):
        value = w.value
        if value is None:
            continue
        given = option_value(options, i, ("-f", "--file", "--makefile"))
        if given is not None and (given.value is None or is_input(given)):
            found.cannot_see(f"a makefile read from `{brief(given.source)}`")
        if value == "-E" or (value.startswith("-E") and not value.startswith("--")) or long_option(value, ("--eval",)):
            found.cannot_see(f"make code given inline (`{brief(w.source)}`)")


# options that run a command given as their value (GNU long options may be abbreviated)
COMMAND_OPTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "split": (("--filter",), ""),
}


def command_options(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    longs, letters = COMMAND_OPTIONS[program]
    for i, w in enumerate(words[1:], 1):
        value = w.value
        if value is None:
            continue
        short = (value.startswith("-") and not value.startswith("--")) or (program == "tar" and i == 1)
        if long_option(value, longs) or (short and letters and any(c in value for c in letters)):
            found.cannot_see(f"`{program}` running a command given in `{brief(w.source)}`")
            return


def python(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    interpreter(found, program, words, depth)
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
_CODE_MODULES = frozenset(
    {
        "timeit",
        "cProfile",
        "profile",
        "trace",
        "pdb",
        "code",
        "runpy",
        "doctest",
        "IPython",
        "idlelib",
        "asyncio",
        "ptpython",
        "bpython",
    }
)
