"""The one directory walker behind list_dir, glob and grep (both grep backends).

Owns: a sorted depth-first walk that applies the gitignore rules (an explicitly named ignored directory is
walked in full), walks dot files, never enters `.git` or symlinked directories.
Must not: read contents, resolve model paths (callers pass a confined directory), or do async work.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.tools.base import ToolError

if TYPE_CHECKING:
    import threading
    from collections.abc import Iterator

    from tether.tools.sandbox import WorkspaceSandbox

__all__ = ["WalkEntry", "WalkStats", "symlink_target_file", "walk"]


@dataclass(frozen=True, slots=True)
class WalkEntry:
    rel: str  # workspace-relative posix path
    depth: int  # 1 for a direct child of the start directory
    is_dir: bool  # a real directory (never true for a symlink)
    is_file: bool  # a regular file (not a symlink, FIFO, socket or device)
    is_symlink: bool


@dataclass(slots=True)
class WalkStats:
    ignored: int = 0  # entries left out because of .gitignore (.git is not counted)
    unreadable: int = 0  # directories that could not be listed


def walk(
    sandbox: WorkspaceSandbox,
    start_rel: str,
    *,
    max_depth: int | None = None,
    stats: WalkStats | None = None,
    stop: threading.Event | None = None,
) -> Iterator[WalkEntry]:
    """Yield entries below `start_rel` (a workspace-relative directory), sorted depth-first."""
    stats = stats if stats is not None else WalkStats()
    base = "" if start_rel in ("", ".") else start_rel.strip("/")
    filtered = not (base and sandbox.is_ignored(base, True))
    yield from _walk_dir(sandbox, base, 1, max_depth, filtered, stats, stop)


def _walk_dir(
    sandbox: WorkspaceSandbox,
    dir_rel: str,
    depth: int,
    max_depth: int | None,
    filtered: bool,
    stats: WalkStats,
    stop: threading.Event | None,
) -> Iterator[WalkEntry]:
    if stop is not None and stop.is_set():
        return
    try:
        with os.scandir(sandbox.absolute(dir_rel)) as handle:
            children = sorted(handle, key=lambda item: item.name)
    except OSError:
        stats.unreadable += 1
        return
    for child in children:
        rel = f"{dir_rel}/{child.name}" if dir_rel else child.name
        try:
            is_symlink = child.is_symlink()
            is_dir = not is_symlink and child.is_dir(follow_symlinks=False)
            is_file = not is_symlink and child.is_file(follow_symlinks=False)
        except OSError:
            continue
        if child.name == ".git" or sandbox.is_private(rel):
            continue  # always hidden (Tether's own files too), so not counted as "ignored"
        if filtered and sandbox.ignore.matches_entry(rel, is_dir):
            stats.ignored += 1
            continue
        yield WalkEntry(rel, depth, is_dir, is_file, is_symlink)
        if is_dir and (max_depth is None or depth < max_depth):
            yield from _walk_dir(sandbox, rel, depth + 1, max_depth, filtered, stats, stop)


def symlink_target_file(sandbox: WorkspaceSandbox, rel: str) -> bool:
    """True if the symlink at `rel` leads to a regular file inside the workspace."""
    try:
        return sandbox.resolve(rel).is_file()
    except (OSError, ToolError):
        return False
