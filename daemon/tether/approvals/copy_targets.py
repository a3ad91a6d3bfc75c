"""The file an archiver or a copier writes where its command names it: `tar -cf FILE`, `zip FILE`, rsync, scp.

Owns: finding that word among a tar, zip, rsync or scp command's words (tar's old-style first cluster
included), for the allow rules' write check; not what an extraction writes.
Must not: parse shell text, decide, or look at the disk (`write_targets.py` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .shell_grammar import Word

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["written_file"]

# short letters whose value is the next word (or the rest of the cluster)
_TAR_VALUED = "bCfFgHIKLNTVX"
_TAR_WRITING = frozenset({"c", "r", "u", "A"})  # create, append, update, concatenate
_TAR_WRITING_LONG = ("--create", "--append", "--update", "--concatenate", "--catenate")
# rsync's options written with their value as the next word (`--exclude x`)
_RSYNC_VALUED = frozenset(
    """
-f -T --filter --exclude --include --exclude-from --include-from --files-from --suffix --backup-dir
--partial-dir --temp-dir --chmod --chown --timeout --contimeout --max-size --min-size --bwlimit --port
--compare-dest --copy-dest --link-dest --out-format --info --debug --usermap --groupmap --iconv
--modify-window --max-delete --outbuf --log-file --write-batch --only-write-batch --read-batch
""".split()
)
_SCP_VALUED = "cFiJloPSX"
# zip's options written with their value as the next word
_ZIP_VALUED = frozenset(
    {"-b", "--temp-path", "-t", "-tt", "-n", "-s", "--split-size", "-O", "--out", "-x", "--exclude", "-i", "--include"}
)


def written_file(program: str, words: list[Word]) -> Word | None:
    """The word naming the file `program` writes (None: it names none, or reads only)."""
    if program == "tar":
        return _tar_archive(words)
    if program == "zip":
        operands = _operands(words, lambda value: value in _ZIP_VALUED)
        return operands[0] if operands else None  # the archive, then the files put in it
    valued = (lambda value: value in _RSYNC_VALUED) if program == "rsync" else _scp_valued
    operands = _operands(words, valued)
    return operands[-1] if len(operands) > 1 else None  # sources, then the destination


def _scp_valued(value: str) -> bool:
    return not value.startswith("--") and len(value) == 2 and value[1] in _SCP_VALUED


def _operands(words: list[Word], takes_next: Callable[[str], bool]) -> list[Word]:
    found: list[Word] = []
    i = 1
    while i < len(words):
        value = words[i].value or ""
        if value == "--":
            return found + list(words[i + 1 :])
        if value.startswith("-") and value != "-":
            i += 2 if takes_next(value) else 1
            continue
        found.append(words[i])
        i += 1
    return found


def _tar_archive(words: list[Word]) -> Word | None:
    """`-f`'s value when the command writes the archive (`c`, `r`, `u`, `A`, in a dash or an
    old-style cluster, or their long options)."""
    writes, archive = False, None
    queue: list[str] = []  # letters of the clusters still waiting for their value word
    for i, word in enumerate(words[1:], 1):
        value = word.value or ""
        if queue:
            archive = word if queue.pop(0) == "f" else archive
            continue
        if value == "--":
            break
        if value.startswith("--"):
            writes = writes or value.split("=", 1)[0] in _TAR_WRITING_LONG
            if value.startswith("--file="):
                archive = Word(value[7:], value[7:], word.literal)
            elif value == "--file":
                queue.append("f")
        elif value.startswith("-") or i == 1:
            cluster = value.lstrip("-")
            writes = writes or any(letter in _TAR_WRITING for letter in cluster)
            old_style = not value.startswith("-")
            for at, letter in enumerate(cluster):
                if letter in _TAR_VALUED:
                    rest = cluster[at + 1 :]
                    if rest and not old_style:  # `-fMakefile`: the rest of the cluster is the value
                        archive = Word(rest, rest, word.literal) if letter == "f" else archive
                        break
                    queue.append(letter)
    return archive if writes else None
