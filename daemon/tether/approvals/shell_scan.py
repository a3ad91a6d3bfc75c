"""A second, independent reading of where commands start (/bin/sh's quoting): a cross-check on the grammar.

Owns: that scan (its programs count as parts, so a disagreement fails closed) and `dash_differences` (text
dash and bash may read differently: not fully seen). Why: docs/decisions/0004-approvals.md.
Must not: be trusted alone (it does not look into substitutions or wrappers), or decide anything.
"""

from __future__ import annotations

import re

__all__ = ["command_starts", "dash_differences"]

# reserved words after which a command starts again
_THEN_COMMAND = frozenset({"if", "then", "do", "else", "elif", "while", "until", "!", "time", "{", "coproc"})
# reserved words whose next words are not a command (until the next separator)
_NOT_COMMAND = frozenset({"for", "select", "case", "function", "in", "esac", "fi", "done", "}", "[[", "]]", "[", "(("})
_SEPARATORS = ";&|()`\n"  # `{` and `}` are reserved words, not operators
_WORD_END = set(" \t\n;&|()<>`")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")


def command_starts(text: str) -> list[list[str]]:
    """The words of every command, from its program to the next operator, in order."""
    reading = _Commands()
    heredocs: list[tuple[str, bool]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and text.startswith("\n", i + 1):
            i += 2
        elif reading.cases and text.startswith(";;", i):
            i = i + 2
            reading.boundary(at_start=False)
        elif text.startswith("$((", i):
            i = i + 3  # arithmetic (a `$(` inside still starts a command)
            reading.boundary(at_start=False)
        elif ch in " \t":
            i += 1
        elif ch == "\n":
            i = _skip_heredoc_bodies(text, i + 1, heredocs)
            heredocs = []
            reading.boundary(at_start=True)
        elif ch == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif ch == "$" and text.startswith("(", i + 1):
            i = i + 2
            reading.boundary(at_start=True)
        elif ch in _SEPARATORS:
            i = i + 1
            reading.boundary(at_start=True)
        elif ch in "<>":
            i = _redirection(text, i, heredocs)
        else:
            word, i = _read_word(text, i)
            reading.word(word, text, i)
    return reading.starts


class _Commands:
    """The commands `command_starts` has read so far, and where it is in the current one."""

    __slots__ = ("at_start", "cases", "current", "starts")

    def __init__(self) -> None:
        self.starts: list[list[str]] = []
        self.current: list[str] | None = None  # the command being read
        self.at_start = True
        self.cases = 0  # open `case` statements: after `;;` comes a pattern, not a command

    def boundary(self, *, at_start: bool) -> None:
        """An operator ends the current command; a command may start next (`at_start`)."""
        self.at_start, self.current = at_start, None

    def word(self, word: str, text: str, i: int) -> None:
        """`word`, which ends at `text[i]`."""
        if not self.at_start:
            if self.current is not None and word:
                self.current.append(word)
            return
        if not word:
            return
        if _ASSIGNMENT.match(word) or (word.isdigit() and i < len(text) and text[i] in "<>"):
            return  # `FOO=1 cmd`, `2>x cmd`: the command is still to come
        if word in _THEN_COMMAND:
            return
        self.cases += {"case": 1, "esac": -1}.get(word, 0)
        self.at_start, self.current = False, None
        if word in _NOT_COMMAND or text[_skip_blanks(text, i) :].startswith("()"):
            return
        self.current = [word]
        self.starts.append(self.current)


def _redirection(text: str, i: int, heredocs: list[tuple[str, bool]]) -> int:
    """Past the redirection at `i` and its target; a here-document's delimiter is added to
    `heredocs` (its body starts on the next line)."""
    j = i
    while j < len(text) and text[j] in "<>&|-":
        j += 1
    operator = text[i:j]
    j = _skip_blanks(text, j)
    target, j = _read_word(text, j)
    if operator in ("<<", "<<-") and target:
        heredocs.append((target, operator == "<<-"))
    return j


def _read_word(text: str, i: int) -> tuple[str, int]:
    """One word from `i`, quotes removed; stops at a blank, an operator or `$(`."""
    out: list[str] = []
    n = len(text)
    while i < n and text[i] not in _WORD_END:
        ch = text[i]
        if ch == "\\":
            if text.startswith("\n", i + 1):
                i += 2
                continue
            out.append(text[i + 1 : i + 2])
            i += 2
        elif ch == "'":
            end = text.find("'", i + 1)
            end = n if end < 0 else end
            out.append(text[i + 1 : end])
            i = end + 1
        elif ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    out.append(text[j + 1] if text[j + 1] in '$`"\\' else text[j : j + 2])
                    j += 2
                    continue
                out.append(text[j])
                j += 1
            i = j + 1
        elif ch == "$" and text.startswith("(", i + 1):
            break
        else:
            out.append(ch)
            i += 1
    return "".join(out), i


def _skip_blanks(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


def _skip_heredoc_bodies(text: str, i: int, heredocs: list[tuple[str, bool]]) -> int:
    for delimiter, strip_tabs in heredocs:
        while i < len(text):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            line = text[i:end]
            i = end + 1
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                break
    return i


# `<<` or `<<-` and the delimiter word as written: unquoted when it has no quote or backslash
_HEREDOC = re.compile(r"<<-?[ \t]*([^\s;&|()<>]+)")


_SUBSTITUTION_IN_BRACES = re.compile(r"\$\{[^}]*(`|\$\()")


def dash_differences(text: str) -> list[str]:
    """Where dash may run what the grammar does not see (fail closed: over-approximates)."""
    found: list[str] = []
    if "&>" in text:
        found.append("`&>` (bash redirects, /bin/sh starts a background job)")
    if "$'" in text and _dollar_quote_outside_single_quotes(text):
        found.append("`$'…'` quoting (bash only: /bin/sh reads it as other words)")
    if _SUBSTITUTION_IN_BRACES.search(text):
        # `"${x:=`cmd`}"`: the grammar does not expose a backtick inside a parameter
        # expansion in double quotes, and the scan does not read inside double quotes
        found.append("a command substitution inside `${…}` (the grammar does not show what it runs)")
    for match in _HEREDOC.finditer(text):
        if not any(c in match.group(1) for c in "'\"\\"):
            rest = text[match.end() :]
            if "`" in rest or "$(" in rest:
                found.append(f"a here-document (`<<{match.group(1)}`) whose body runs commands")
                break
    return found


def _dollar_quote_outside_single_quotes(text: str) -> bool:
    """Whether a `$'` may be outside single quotes; exact only for plain top-level quoting."""
    if any(c in text for c in '"`') or "$(" in text or "<<" in text:
        return True  # nested quoting the scan does not follow: assume the worst
    i, n, word_start = 0, len(text), True
    while i < n:
        ch = text[i]
        if ch == "\\":
            i, word_start = i + 2, False
        elif ch == "'":
            end = text.find("'", i + 1)
            if end < 0:
                return False
            i, word_start = end + 1, False
        elif ch == "#" and word_start:
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif ch == "$" and text.startswith("'", i + 1):
            return True
        else:
            word_start = ch in " \t\n;&|()<>"
            i += 1
    return False
