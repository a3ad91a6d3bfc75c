"""Line diffs for the mutating tools: unified diff text, its hunks, and partial application.

Owns: hunks (3 lines of context, `difflib.unified_diff`'s boundaries; numbered from 0 in code, from 1 for
people), `a/` `b/` headers, applying the kept hunks, capping a diff, and the first line a change touches.
Must not: touch files, the sandbox or the ledger; callers pass text and names.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["CONTEXT_LINES", "Hunk", "apply_hunks", "cap_diff", "hunks", "unified_diff"]

CONTEXT_LINES = 3
_NO_NEWLINE = "\\ No newline at end of file"

# One difflib opcode: (tag, i1, i2, j1, j2) over the old (i) and new (j) line lists.
_Opcode = tuple[str, int, int, int, int]


@dataclass(frozen=True, slots=True)
class Hunk:
    """One `@@` block: 0-based line ranges in the old and new text, and its opcodes."""

    index: int
    old_start: int
    old_end: int
    new_start: int
    new_end: int
    opcodes: tuple[_Opcode, ...]

    def header(self) -> str:
        return f"@@ -{_range(self.old_start, self.old_end)} +{_range(self.new_start, self.new_end)} @@"


def _split(text: str) -> list[str]:
    # Split on "\n" only, keeping it: str.splitlines would also split on \r, \f and
    # \u2028, and the rebuilt text would then differ from the original.
    if not text:
        return []
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])  # last line without a newline
    return lines


def _range(start: int, end: int) -> str:
    # Same convention as difflib/GNU diff: an empty range names the line before it.
    length = end - start
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"


def _matcher(old_lines: list[str], new_lines: list[str]) -> difflib.SequenceMatcher[str]:
    # difflib's defaults (autojunk on), as difflib.unified_diff uses: without the junk
    # heuristic, files of repetitive lines (blank lines, braces) take seconds to diff.
    return difflib.SequenceMatcher(None, old_lines, new_lines)


def _hunks_of(matcher: difflib.SequenceMatcher[str]) -> list[Hunk]:
    out: list[Hunk] = []
    for group in matcher.get_grouped_opcodes(CONTEXT_LINES):
        if all(code[0] == "equal" for code in group):
            continue  # identical texts still yield one all-equal group
        first, last = group[0], group[-1]
        out.append(Hunk(len(out), first[1], last[2], first[3], last[4], tuple(group)))
    return out


def hunks(old: str, new: str) -> list[Hunk]:
    """The hunks of the diff from `old` to `new`, in order (empty when they are equal)."""
    return _hunks_of(_matcher(_split(old), _split(new)))


def first_changed_line(old: str | None, new: str | None) -> int | None:
    """The 1-based line of `new` where it first differs from `old` (a created file: 1);
    None when there is no new text or nothing differs."""
    if new is None:
        return None
    changed = hunks(old or "", new)
    # a hunk starts with lines of context: its first opcode that is not "equal" is the change
    starts = [j1 for tag, _i1, _i2, j1, _j2 in changed[0].opcodes if tag != "equal"] if changed else []
    return starts[0] + 1 if starts else None


def _emit(out: list[str], prefix: str, line: str) -> None:
    if line.endswith("\n"):
        out.append(prefix + line)
    else:
        out.append(f"{prefix}{line}\n{_NO_NEWLINE}\n")


def unified_diff(old: str, new: str, rel_path: str, *, created: bool = False, deleted: bool = False) -> str:
    """Unified diff text with `--- a/rel` / `+++ b/rel` headers ("" when nothing changed).

    `created`/`deleted` use `/dev/null` for the missing side, as git does. A last line
    without a newline is followed by "\\ No newline at end of file".
    """
    old_lines, new_lines = _split(old), _split(new)
    found = _hunks_of(_matcher(old_lines, new_lines))
    if not found:
        return ""
    out = [
        "--- /dev/null\n" if created else f"--- a/{rel_path}\n",
        "+++ /dev/null\n" if deleted else f"+++ b/{rel_path}\n",
    ]
    for hunk in found:
        out.append(hunk.header() + "\n")
        for tag, i1, i2, j1, j2 in hunk.opcodes:
            if tag == "equal":
                for line in old_lines[i1:i2]:
                    _emit(out, " ", line)
                continue
            for line in old_lines[i1:i2]:
                _emit(out, "-", line)
            for line in new_lines[j1:j2]:
                _emit(out, "+", line)
    return "".join(out)


def apply_hunks(old: str, new: str, keep: Iterable[int]) -> str:
    """`old` with only the hunks numbered in `keep` (0-based) of the diff old -> new applied.

    Indexes that name no hunk are ignored. Every change belongs to exactly one hunk, so
    keeping all hunks gives `new` and keeping none gives `old`.
    """
    old_lines, new_lines = _split(old), _split(new)
    kept = set(keep)
    matcher = _matcher(old_lines, new_lines)
    # Copied first: get_grouped_opcodes trims the matcher's cached opcode list in place.
    opcodes = list(matcher.get_opcodes())
    # Changed opcodes keep their exact ranges inside the groups, so they identify their hunk.
    owner: dict[_Opcode, int] = {}
    for hunk in _hunks_of(matcher):
        for code in hunk.opcodes:
            if code[0] != "equal":
                owner[code] = hunk.index
    out: list[str] = []
    for code in opcodes:
        tag, i1, i2, j1, j2 = code
        if tag != "equal" and owner.get(code) in kept:
            out.extend(new_lines[j1:j2])
        else:
            out.extend(old_lines[i1:i2])
    return "".join(out)


def cap_diff(diff: str, max_lines: int = 200) -> str:
    """The diff cut to `max_lines` lines, with a note saying how much was left out."""
    lines = diff.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line + "\n" for line in lines]
    if len(lines) <= max_lines:
        return diff
    return "".join(lines[:max_lines]) + f"[diff truncated: {len(lines) - max_lines} more lines not shown]\n"
