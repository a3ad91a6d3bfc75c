"""What copiers and extractors write that their command does not show in full (cp, mv, ln, install, rsync, tar).

Owns: telling `PartFinder` those writes (`writes_to`: checked on disk by `write_targets.py`) or that no allow
rule may approve the command (`not_simple`: the names are not shown).
Must not: parse shell text, look at the disk, or decide.
"""

from __future__ import annotations

import posixpath

from .parts import CommandPart, PartFinder
from .shell_grammar import Word

__all__ = ["COPIERS", "unseen_tree_or_archive"]

# short letters whose value is the next word (or the rest of the cluster); long options alike
_VALUED_SHORT = {"cp": "tS", "mv": "tS", "ln": "tS", "install": "tSmog"}
_VALUED_LONG = frozenset({"--target-directory", "--suffix", "--mode", "--owner", "--group", "--strip-program"})
_RECURSIVE_SHORT = {"cp": "rRa", "rsync": "ra"}
_RECURSIVE_LONG = ("--recursive", "--archive")
_UNZIP_READS = frozenset("lvtZpz")  # list, verbose list, test, zipinfo, pipe to stdout, comment


def _copier(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    """`cp|mv|ln|install SRC... DEST`, `-t DIR SRC...`, `-T SRC DEST`: DEST, and DEST/name of
    each source, are written (a directory DEST holds the copies under their own names)."""
    found.parts.append(CommandPart(tuple(words)))
    if program == "cp" and (why := unseen_tree_or_archive(program, words)):
        found.not_simple(why)
    target, no_dir, operands = _destination(program, words)
    if target is None and len(operands) > 1:
        target, operands = operands[-1], operands[:-1]
    if target is None:
        return
    found.writes_to(target, program)
    if not no_dir:
        for source in operands:
            found.writes_to(_inside(target, source), program)


def _destination(program: str, words: list[Word]) -> tuple[Word | None, bool, list[Word]]:
    """The `-t` directory (or None), whether `-T` was given, and the operands."""
    target: Word | None = None
    no_dir, operands, letters = False, [], _VALUED_SHORT[program]
    i = 1
    while i < len(words):
        word, value = words[i], words[i].value
        following = words[i + 1] if i + 1 < len(words) else None
        i += 1
        if value is None or value == "-" or not value.startswith("-"):
            operands.append(word)
        elif value == "--":
            operands += words[i:]
            break
        elif value.startswith("--"):
            name, eq, given = value.partition("=")
            no_dir = no_dir or name == "--no-target-directory"
            if name in _VALUED_LONG and not eq:
                i += 1
            if name == "--target-directory":
                target = Word(given, given, word.literal) if eq else following
        else:
            no_dir = no_dir or "T" in value
            for at, letter in enumerate(value[1:], 1):
                if letter in letters:
                    rest = value[at + 1 :]
                    if not rest:
                        i += 1
                    if letter == "t":
                        target = Word(rest, rest, word.literal) if rest else following
                    break
    return target, no_dir, operands


def _inside(directory: Word, source: Word) -> Word:
    """The file `source` becomes in `directory` (a word only as literal as both)."""
    name = posixpath.basename((source.value or "").rstrip("/")) or "?"
    joined = posixpath.join(directory.value or "", name)
    return Word(
        f"{directory.source}/{name}",
        joined if directory.value is not None and source.value is not None else None,
        directory.literal and source.literal,
        directory.glob or source.glob,
    )


def _unzip(found: PartFinder, program: str, words: list[Word], depth: int) -> None:
    found.parts.append(CommandPart(tuple(words)))
    if why := unseen_tree_or_archive(program, words):
        found.not_simple(why)


def unseen_tree_or_archive(program: str, words: list[Word]) -> str:
    """Why the files this command writes are not shown by it ("" when they are)."""
    values = [w.value or "" for w in words[1:]]
    if program == "unzip":
        flags = "".join(v[1:] for v in values if v.startswith("-") and not v.startswith("--"))
        if not any(letter in _UNZIP_READS for letter in flags):
            return "`unzip` writes the names inside the archive, which the command does not show"
        return ""
    if program == "tar":
        first = values[0] if values else ""
        clusters = [v.lstrip("-") for v in values if v.startswith("-") and not v.startswith("--")]
        if not first.startswith("-"):
            clusters.append(first)  # tar's old-style first word (`tar xf a.tar`)
        if any("x" in c for c in clusters) or any(v.split("=", 1)[0] in ("--extract", "--get") for v in values):
            return "`tar` extracting writes the names inside the archive, which the command does not show"
        return ""
    short = _RECURSIVE_SHORT.get(program, "")
    for v in values:
        if v == "--":
            break
        if v.split("=", 1)[0] in _RECURSIVE_LONG or (
            v.startswith("-") and not v.startswith("--") and any(c in v[1:] for c in short)
        ):
            return f"`{program}` copying a tree writes the names inside it, which the command does not show"
    return ""


COPIERS = {"cp": _copier, "mv": _copier, "ln": _copier, "install": _copier, "unzip": _unzip}
