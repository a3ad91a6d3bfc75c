"""What a shell command changed in the workspace: a cheap before/after stat comparison.

Owns: the time-bounded scan of non-ignored files (`SCAN_BUDGET_S`), hashing only what changed, and each
change's content before: Tether's stored copy, git's clean blob, or a bounded pre-read (decision 0009).
Must not: run any program, follow links (but `.git`'s), or read unchanged files (but the pre-read).
"""

from __future__ import annotations

import os
import struct
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tether.tools.changes import UNRECORDED, KnownFiles, digest_of
from tether.tools.git_objects import find_git_dir, read_blobs
from tether.tools.regular_files import open_regular
from tether.tools.walk import walk

if TYPE_CHECKING:
    from tether.tools.changes import ChangeRecorder
    from tether.tools.sandbox import WorkspaceSandbox

__all__ = ["SCAN_BUDGET_S", "Before", "scan_after", "scan_before", "stat_tree"]

SCAN_BUDGET_S = 0.15
PREREAD_MAX = 256 * 1024
PREREAD_TOTAL = 16 * 1024 * 1024
INDEX_MAX = 128 * 1024 * 1024  # ~1.5 million entries: far more than a tree the scan's budget walks

Stats = dict[str, tuple[int, int]]  # rel -> (mtime_ns, size) of regular files


@dataclass(slots=True)
class Before:
    stats: Stats
    complete: bool  # False: the tree was too large to scan in time (nothing is compared)
    known: dict[str, str] = field(default_factory=dict)  # rel -> digest stored already
    git: dict[str, str] = field(default_factory=dict)  # rel -> git blob id (clean in the index)
    copies: dict[str, bytes] = field(default_factory=dict)  # rel -> content read before


def stat_tree(sandbox: WorkspaceSandbox, budget_s: float | None = None) -> tuple[Stats, bool]:
    """(mtime_ns, size) of every non-ignored regular file; False if the budget ran out."""
    deadline = time.monotonic() + (SCAN_BUDGET_S if budget_s is None else budget_s)
    root = str(sandbox.root)
    stats: Stats = {}
    for count, entry in enumerate(walk(sandbox, ".")):
        if entry.is_file:
            try:
                info = os.lstat(os.path.join(root, entry.rel))
            except OSError:
                continue
            stats[entry.rel] = (info.st_mtime_ns, info.st_size)
        if count % 64 == 63 and time.monotonic() >= deadline:
            return stats, False
    return stats, True


def scan_before(sandbox: WorkspaceSandbox, known: KnownFiles, cap: int) -> Before:
    stats, complete = stat_tree(sandbox)
    before = Before(stats, complete)
    if not complete:
        return before
    index = GitIndex.read(str(sandbox.root))
    root, total = str(sandbox.root), 0
    for rel, (mtime_ns, size) in stats.items():
        digest = known.digest(rel, mtime_ns, size)
        if digest is not None:
            before.known[rel] = digest
        elif (blob := index.clean(rel, mtime_ns, size)) is not None:
            before.git[rel] = blob
        elif size <= min(PREREAD_MAX, cap) and total + size <= PREREAD_TOTAL:
            try:
                with open_regular(os.path.join(root, rel)) as handle:
                    before.copies[rel] = handle.read(PREREAD_MAX + 1)
            except OSError:
                continue
            total += size
    return before


def scan_after(recorder: ChangeRecorder, before: Before) -> None:
    """Record every file the command created, changed or deleted."""
    if not before.complete:
        recorder.notices.append(
            f"the files this command changed were not recorded (the workspace has too many files to compare "
            f"within {int(SCAN_BUDGET_S * 1000)} ms), so a rewind cannot restore them"
        )
        return
    now, _complete = stat_tree(recorder.sandbox, SCAN_BUDGET_S * 4)
    changed = sorted(rel for rel in set(before.stats) | set(now) if before.stats.get(rel) != now.get(rel))
    from_git = git_blobs(recorder.root, [before.git[rel] for rel in changed if rel in before.git])
    for rel in changed:
        after, note = recorder.state(rel)
        if rel not in before.stats:
            first: str | None = None
        elif rel in before.known:
            first = before.known[rel]
        elif (data := before.copies.get(rel, from_git.get(before.git.get(rel, "")))) is not None:
            first = digest_of(data)
            recorder.keep(first, data)
        else:
            first, note = UNRECORDED, note or "its content before the command was not known"
        if first != after or note:
            recorder.add(rel, first, after, note)


def git_blobs(workspace: str, blob_ids: list[str]) -> dict[str, bytes]:
    """The contents of git blobs, read from the object store of the workspace's repository."""
    found = find_git_dir(workspace) if blob_ids else None
    return read_blobs(found.common_dir, blob_ids) if found is not None else {}


class GitIndex:
    """The entries of the git index (v2/v3) of the repository holding a workspace."""

    def __init__(self, entries: dict[str, tuple[int, int, str]], written_s: int) -> None:
        self.entries, self.written_s = entries, written_s  # rel to the workspace -> (mtime_s, size, blob)

    def clean(self, rel: str, mtime_ns: int, size: int) -> str | None:
        entry = self.entries.get(rel)
        if entry is None or entry[1] != size % 2**32:
            return None
        seconds = mtime_ns // 1_000_000_000
        # same second as the index was written: "racily clean", git itself would look again
        return entry[2] if entry[0] == seconds and seconds < self.written_s else None

    @classmethod
    def read(cls, workspace: str) -> GitIndex:
        try:
            return cls._read(workspace)
        except (OSError, ValueError, struct.error, UnicodeDecodeError):
            return cls({}, 0)

    @classmethod
    def _read(cls, workspace: str) -> GitIndex:
        found = find_git_dir(workspace)
        if found is None:
            return cls({}, 0)
        with open_regular(os.path.join(found.git_dir, "index")) as handle:
            data = handle.read(INDEX_MAX + 1)  # a planted (sparse) index of many GB is not read into memory
            written = int(os.fstat(handle.fileno()).st_mtime)
        if len(data) > INDEX_MAX:
            raise ValueError("a git index larger than Tether reads")
        return cls(_entries(data, os.path.relpath(workspace, found.top)), written)


def _entries(data: bytes, prefix: str) -> dict[str, tuple[int, int, str]]:
    signature, version, count = struct.unpack(">4sLL", data[:12])
    if signature != b"DIRC" or version not in (2, 3):
        raise ValueError("not a git index Tether reads")
    prefix = "" if prefix == "." else prefix.replace(os.sep, "/") + "/"
    entries, at = {}, 12
    for _ in range(count):
        mtime_s, size, blob, flags = (
            struct.unpack(">L", data[at + 8 : at + 12])[0],
            struct.unpack(">L", data[at + 36 : at + 40])[0],
            data[at + 40 : at + 60].hex(),
            struct.unpack(">H", data[at + 60 : at + 62])[0],
        )
        start = at + 62 + (2 if version == 3 and flags & 0x4000 else 0)
        end = data.index(b"\0", start)
        name = data[start:end].decode("utf-8")
        at += ((end - at) // 8 + 1) * 8
        if (flags >> 12) & 3 == 0 and name.startswith(prefix):
            entries[name[len(prefix) :]] = (mtime_s, size, blob)
    return entries
