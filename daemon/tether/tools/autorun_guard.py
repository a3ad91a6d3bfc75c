"""Putting back the autorun paths a command run without asking created or changed.

Owns: `AutorunSnapshot`: `take` copies the top-level autorun paths (approvals/autoruns.py) before such a
command, `restore` makes each what it was byte for byte (mode, mtime) and names them (decision 0009).
Must not: follow links, look beyond those paths and the change scan's, or decide which commands are guarded.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio.to_thread

from tether.approvals.autoruns import AUTORUN_DIRS, AUTORUN_FILES, autorun_why

if TYPE_CHECKING:
    from collections.abc import Callable

    from tether.tools.base import ToolContext
    from tether.tools.changes import ChangeRecorder

__all__ = ["REVERTED_WHY", "AutorunSnapshot", "put_back", "reverted_note", "snapshot_if_guarded"]

REVERTED_WHY = (
    "a command run without asking may not create or change files that an editor, shell or git "
    "runs later outside the sandbox; to change them, use the file tools or a command that names "
    "them (the user is asked), or ask the user"
)
_TOP = tuple(sorted({*AUTORUN_DIRS, *AUTORUN_FILES}))


@dataclass(frozen=True, slots=True)
class _Entry:
    kind: str  # "file" | "dir" | "link"
    mode: int
    data: bytes = b""  # a file's content, a link's target
    mtime_ns: int = field(default=0, compare=False)  # put back, but a touch alone changes nothing
    # (inode, size, mtime, ctime): the same stamp is the same content (a sandboxed command
    # cannot set ctime), so `restore` reads only what changed
    stamp: tuple[int, int, int, int] = field(default=(0, 0, 0, 0), compare=False)


@dataclass(slots=True)
class AutorunSnapshot:
    """The state of each top-level autorun path (and everything below it) at `take`."""

    root: str
    entries: dict[str, _Entry] = field(default_factory=dict)  # rel -> what was there
    children: dict[str, set[str]] = field(default_factory=dict)  # a folder's rel -> its entries' rels

    @classmethod
    def take(cls, root: str) -> AutorunSnapshot:
        snapshot = cls(root)
        for name in _TOP:
            snapshot._record(name)
        return snapshot

    def _record(self, rel: str) -> None:
        path = os.path.join(self.root, rel)
        entry = _read(path)
        if entry is None:
            return
        self.entries[rel] = entry
        if entry.kind == "dir":
            self.children[rel] = {f"{rel}/{name}" for name in _names(path)}
            for child in sorted(self.children[rel]):
                self._record(child)

    def restore(self) -> tuple[list[str], list[str]]:
        """Makes every autorun path what it was at `take`: the files it put back or removed,
        and those it could not (with why)."""
        changed: list[str] = []
        failed: list[str] = []
        for name in _TOP:
            try:
                self._restore(name, changed)
            except OSError as error:
                failed.append(f"`{name}` ({error.strerror or error})")
        return changed, failed

    def _restore(self, rel: str, changed: list[str]) -> None:
        path = os.path.join(self.root, rel)
        was = self.entries.get(rel)
        now = _read(path, was)
        if was is not None and now is not None and was.kind == now.kind == "dir":
            if was.mode != now.mode:
                os.chmod(path, stat.S_IMODE(was.mode))  # before listing it: 000 would hide its files
        elif was != now:
            if now is not None:
                changed.extend(_files(rel, path, now))
                _remove(path, now)
            elif was is not None and was.kind != "dir":
                changed.append(rel)  # removed by the command
            if was is not None:
                _recreate(path, was)
        if was is not None and was.kind == "dir":
            for child in sorted({f"{rel}/{n}" for n in _names(path)} | self.children.get(rel, set())):
                self._restore(child, changed)


async def snapshot_if_guarded(ctx: ToolContext) -> AutorunSnapshot | None:
    """The autorun paths as they are, when this command runs without the user's answer."""
    if not (ctx.guard_autoruns and ctx.workspace_writable):
        return None
    root = str(ctx.sandbox.root)
    return await anyio.to_thread.run_sync(AutorunSnapshot.take, root)


async def put_back(snapshot: AutorunSnapshot, ctx: ToolContext, scan: Callable[[], None] | None) -> None:
    """Restores `snapshot`, then runs the change `scan` (rewind's) and undoes the deeper
    autoruns it saw; tells the model (in the result, via the recorder) and the user."""
    changed, failed = await anyio.to_thread.run_sync(snapshot.restore)
    if scan is not None:
        await anyio.to_thread.run_sync(scan)
        if ctx.recorder is not None:
            deeper, not_undone = await anyio.to_thread.run_sync(_undo_deeper, ctx.recorder)
            changed, failed = changed + deeper, failed + not_undone
    note = reverted_note(changed, failed)
    if not note:
        return
    if ctx.recorder is not None:
        ctx.recorder.notices.append(note)
    if ctx.on_notice is not None:
        ctx.on_notice(note)


def _undo_deeper(recorder: ChangeRecorder) -> tuple[list[str], list[str]]:
    """Autoruns below the top level (`sub/.envrc`) among the changes the scan found (best
    effort: the scan skips ignored files and gives up on a large tree): a created one is
    removed, a changed one written back when its earlier content is at hand."""
    changed: list[str] = []
    failed: list[str] = []
    for change in list(recorder.changes.values()):
        if "/" not in change.path or not autorun_why(change.path) or change.after is None:
            continue
        path = os.path.join(recorder.root, change.path)
        earlier = recorder.blobs.get(change.before) if change.before is not None else None
        if change.before is not None and earlier is None:
            failed.append(f"`{change.path}` (its earlier content is not at hand)")
            continue
        try:
            os.unlink(path)
            if earlier is not None:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(earlier)
        except OSError as error:
            failed.append(f"`{change.path}` ({error.strerror or error})")
            continue
        changed.append(change.path)
        recorder.add(change.path, change.before, change.before, None)  # no change left to rewind
    return changed, failed


def reverted_note(changed: list[str], failed: list[str]) -> str:
    """What the model and the user are told ("" when the command touched no autorun path)."""
    names = sorted(set(changed))
    shown = ", ".join(f"`{p}`" for p in names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    note = f"reverted {shown}: {REVERTED_WHY}" if names else ""
    if failed:
        note += (
            ("; " if note else "")
            + "could NOT put back "
            + ", ".join(failed)
            + ": check them before opening the folder"
        )
    return note


def _read(path: str, known: _Entry | None = None) -> _Entry | None:
    """What is at `path` now (`known` when its stamp says it is unchanged)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    stamp = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    if known is not None and known.kind == "file" and known.stamp == stamp and known.mode == info.st_mode:
        return known
    if stat.S_ISLNK(info.st_mode):
        return _Entry("link", info.st_mode, os.fsencode(os.readlink(path)))
    if stat.S_ISDIR(info.st_mode):
        return _Entry("dir", info.st_mode)
    if not stat.S_ISREG(info.st_mode):
        return _Entry("other", info.st_mode)  # a fifo or device: removed if the command made it
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        return _Entry("file", info.st_mode, handle.read(), info.st_mtime_ns, stamp)


def _names(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _files(rel: str, path: str, entry: _Entry) -> list[str]:
    """The names the user should hear of: a folder's files, else the path itself."""
    if entry.kind != "dir":
        return [rel]
    found = [os.path.relpath(os.path.join(d, f), os.path.dirname(path)) for d, _, fs in os.walk(path) for f in fs]
    parent = rel.rpartition("/")[0]
    return [f"{parent}/{f}" if parent else f for f in found] or [rel + "/"]


def _remove(path: str, entry: _Entry) -> None:
    if entry.kind == "dir":
        shutil.rmtree(path)  # links inside are removed, not followed
    else:
        os.unlink(path)


def _recreate(path: str, entry: _Entry) -> None:
    if entry.kind == "dir":
        os.mkdir(path, stat.S_IMODE(entry.mode))
        os.chmod(path, stat.S_IMODE(entry.mode))
    elif entry.kind == "link":
        os.symlink(os.fsdecode(entry.data), path)
    elif entry.kind == "file":
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, stat.S_IMODE(entry.mode))
        with os.fdopen(fd, "wb") as handle:
            handle.write(entry.data)
        os.chmod(path, stat.S_IMODE(entry.mode))
        os.utime(path, ns=(entry.mtime_ns, entry.mtime_ns), follow_symlinks=False)
