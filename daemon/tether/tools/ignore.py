"""Gitignore matching for one workspace: the root `.gitignore`, nested ones, and `.git`.

Owns: loading `.gitignore` files lazily (one cached `GitIgnoreSpec` per directory) and answering "is this
path ignored?" with git's precedence, at a bounded cost whatever the file says (`_backtracks`).
Must not: walk, resolve user paths, or read other ignore sources (global excludes, `info/exclude`, above the root).
"""

from __future__ import annotations

import os
import stat
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported when a `.gitignore` is first read, not when a session opens
    from pathspec import GitIgnoreSpec

__all__ = ["GitignoreMatcher"]

_GITIGNORE = ".gitignore"


class GitignoreMatcher:
    """Answers gitignore questions for paths relative to `root` (posix separators)."""

    def __init__(self, root: str) -> None:
        self._root = root
        # directory (workspace-relative, "" for the root) -> its compiled .gitignore or None
        self._specs: dict[str, GitIgnoreSpec | None] = {}
        # walks run in worker threads; the lock only guards the cache dict
        self._lock = threading.Lock()

    def reload(self) -> None:
        """Forget every cached `.gitignore` (call after they change on disk)."""
        with self._lock:
            self._specs.clear()

    def is_ignored(self, rel_path: str, is_dir: bool) -> bool:
        """Git's answer: ignored if the path or any parent directory is ignored."""
        parts = _split(rel_path)
        if not parts:
            return False  # the workspace root itself
        for depth in range(1, len(parts)):
            if self.matches_entry("/".join(parts[:depth]), True):
                return True
        return self.matches_entry("/".join(parts), is_dir)

    def matches_entry(self, rel_path: str, is_dir: bool) -> bool:
        """Decide for one entry assuming its parents were already found not ignored.

        This is what a walker calls for each entry it meets; it is cheaper than
        `is_ignored` because it does not re-check the parents.
        """
        parts = _split(rel_path)
        if not parts:
            return False
        if ".git" in parts:
            return True  # the repository database (a dir, or a file in worktrees)
        # Deeper .gitignore files win over shallower ones; within one file the last
        # matching rule wins (pathspec's check_file reports that as `include`).
        for depth in range(len(parts) - 1, -1, -1):
            spec = self._spec_for("/".join(parts[:depth]))
            if spec is None:
                continue
            sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
            verdict = spec.check_file(sub).include
            if verdict is not None:
                return verdict
        return False

    def _spec_for(self, dir_rel: str) -> GitIgnoreSpec | None:
        with self._lock:
            if dir_rel in self._specs:
                return self._specs[dir_rel]
        spec = self._load(dir_rel)
        with self._lock:
            self._specs[dir_rel] = spec
        return spec

    def _load(self, dir_rel: str) -> GitIgnoreSpec | None:
        path = os.path.join(self._root, dir_rel, _GITIGNORE) if dir_rel else os.path.join(self._root, _GITIGNORE)
        try:
            # Like git (>= 2.32), do not follow a symlinked .gitignore: it could point anywhere.
            if not stat.S_ISREG(os.lstat(path).st_mode):
                return None
            with open(path, encoding="utf-8", errors="replace") as handle:
                lines = handle.read(_MAX_BYTES).splitlines()
        except OSError:
            return None
        from pathspec import GitIgnoreSpec

        spec = GitIgnoreSpec.from_lines([line for line in lines if not _backtracks(line)])
        return spec if len(spec) else None


# A cloned repository's `.gitignore` is someone else's file: what it costs to match must be
# bounded. pathspec turns each `*` into a regex `[^/]*`; several in one path segment
# backtrack exponentially on a long name that almost matches (`*a*a*a*a*a*a*a*ab` against
# 60 `a`s takes seconds, and holds the GIL: the whole daemon freezes). Patterns with more
# than this many single stars in one segment are left out (they are rare: `*.min.*` has
# two); `**` is matched otherwise and does not count.
_MAX_STARS_PER_SEGMENT = 2
_MAX_BYTES = 1024 * 1024


def _backtracks(line: str) -> bool:
    return any(segment.replace("**", "").count("*") > _MAX_STARS_PER_SEGMENT for segment in line.split("/"))


def _split(rel_path: str) -> list[str]:
    return [part for part in rel_path.split("/") if part not in ("", ".")]
