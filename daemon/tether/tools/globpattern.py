"""Glob patterns for the `glob` tool, compiled to regular expressions.

Owns: the dialect: `*` and `?` within a component (dot names included), classes, `**` as a whole component,
`{a,b}`, `\\` escapes, matched against the whole path relative to the searched directory.
Must not: touch the filesystem.
"""

from __future__ import annotations

import itertools
import re
import warnings

from tether.tools.base import ToolError

__all__ = ["compile_glob", "literal_prefix"]

_MAX_ALTERNATIVES = 256
_META = frozenset("*?[{\\")


def compile_glob(pattern: str, what: str = "glob: pattern") -> re.Pattern[str]:
    """Compile `pattern` to a regex for `fullmatch` against posix relative paths.

    `what` starts error messages, so they name the tool and argument at fault.
    """
    if not pattern:
        raise ToolError(f"{what} is empty; give a pattern such as '**/*.py'")
    if pattern.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", pattern):
        raise ToolError(
            f"{what} {pattern!r} is absolute; patterns are relative to 'path' (default: the workspace root)"
        )
    alternatives = _expand_braces(pattern, what)
    if any(".." in _components(alt) for alt in alternatives):
        raise ToolError(f"{what} {pattern!r} uses '..'; set 'path' to search a different directory")
    source = "|".join(f"(?:{_translate(alt)})" for alt in alternatives)
    try:
        with warnings.catch_warnings():
            # odd character classes ("[[", "--") only warn in `re`; the regex is still valid
            warnings.simplefilter("ignore")
            return re.compile(source, re.DOTALL)
    except re.error as exc:
        raise ToolError(f"{what} {pattern!r} is not a valid glob: {exc}") from None


def literal_prefix(pattern: str) -> str:
    """Leading directory components without wildcards ("src/**/*.py" -> "src"), to walk less."""
    comps = _components(pattern)[:-1]
    prefix: list[str] = []
    for comp in comps:
        if any(char in _META for char in comp):
            break
        prefix.append(comp)
    return "/".join(prefix)


def _components(pattern: str) -> list[str]:
    return [comp for comp in pattern.split("/") if comp not in ("", ".")]


def _translate(pattern: str) -> str:
    comps = _components(pattern)
    parts: list[str] = []
    for index, comp in enumerate(comps):
        last = index == len(comps) - 1
        if comp == "**":
            parts.append(".*" if last else "(?:[^/]*/)*")
        else:
            parts.append(_translate_component(comp) + ("" if last else "/"))
    return "".join(parts)


def _translate_component(comp: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(comp):
        char = comp[i]
        if char == "\\" and i + 1 < len(comp):
            out.append(re.escape(comp[i + 1]))
            i += 2
        elif char == "*":
            while i < len(comp) and comp[i] == "*":
                i += 1
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[" and (end := _class_end(comp, i)) > 0:
            out.append(_translate_class(comp[i + 1 : end]))
            i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


def _class_end(comp: str, start: int) -> int:
    """Index of the "]" closing the class opened at `start`, or -1 if it is a literal "["."""
    j = start + 1
    if j < len(comp) and comp[j] in "!^":
        j += 1
    if j < len(comp) and comp[j] == "]":
        j += 1  # a leading "]" is a member, as in shell globs
    end = comp.find("]", j)
    return end


def _translate_class(body: str) -> str:
    negated = body[:1] in ("!", "^")
    if negated:
        body = body[1:]
    members: list[str] = []
    for index, char in enumerate(body):
        is_range = char == "-" and 0 < index < len(body) - 1
        members.append("-" if is_range else re.escape(char))
    inner = "".join(members)
    # a class never matches the path separator
    return f"[^/{inner}]" if negated else f"(?!/)[{inner}]"


def _expand_braces(pattern: str, what: str) -> list[str]:
    results: list[str] = []
    pending = [pattern]
    while pending:
        current = pending.pop()
        span = _first_brace_group(current)
        if span is None:
            results.append(current)
            continue
        start, end, options = span
        pending.extend(current[:start] + option + current[end + 1 :] for option in reversed(options))
        if len(pending) + len(results) > _MAX_ALTERNATIVES:
            raise ToolError(f"{what} {pattern!r} expands to more than {_MAX_ALTERNATIVES} alternatives")
    return results


def _first_brace_group(text: str) -> tuple[int, int, list[str]] | None:
    """The first "{...}" with a top-level comma: (start, end, options); None if there is none."""
    i = 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "{":
            depth, j, commas = 0, i, []
            while j < len(text):
                if text[j] == "\\":
                    j += 2
                    continue
                if text[j] == "{":
                    depth += 1
                elif text[j] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                elif text[j] == "," and depth == 1:
                    commas.append(j)
                j += 1
            if j < len(text) and commas:
                bounds = [i, *commas, j]
                return i, j, [text[a + 1 : b] for a, b in itertools.pairwise(bounds)]
        i += 1
    return None
