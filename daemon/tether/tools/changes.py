"""Recording what a tool call changes in the workspace, for checkpoints and rewind.

Owns: `FileChange` (before/after sha256, or why not recorded), `KnownFiles` (per session: files whose content
Tether stored, by stat), and `ChangeRecorder` (one per call, around the file tools' `FileIO` and commands).
Must not: write to the store (the journal does), decide approvals, or read files a call did not touch.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread

from tether.tools.errors import ToolError

if TYPE_CHECKING:
    from tether.tools.base import FileIO, ToolResult
    from tether.tools.sandbox import WorkspaceSandbox
    from tether.tools.tree_scan import Before

__all__ = ["MAX_RECORDED_BYTES", "UNRECORDED", "ChangeRecorder", "FileChange", "KnownFiles", "digest_of"]

# A file larger than this is not recorded (a notice says it cannot be rewound).
MAX_RECORDED_BYTES = 2 * 1024 * 1024
# In place of a digest: the content is not known (too large, not a regular file, ...).
UNRECORDED = "unrecorded"


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file a call changed: sha256 of its content before and after (None: no file;
    `UNRECORDED`: not known, `note` says why)."""

    path: str  # workspace-relative, posix
    before: str | None
    after: str | None
    note: str | None = None


@dataclass(slots=True)
class KnownFiles:
    """Per session: rel path -> (mtime_ns, size, digest) of contents stored as blobs."""

    entries: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    stored: set[str] = field(default_factory=set)  # digests stored (or being committed)
    # call id -> the recorder of a call still running: a call cancelled while it ran has no
    # result to carry its changes, so the journal takes them from here (`unfinished`)
    running: dict[str, ChangeRecorder] = field(default_factory=dict)

    def unfinished(self, call_id: str) -> tuple[list[FileChange], dict[str, bytes]] | None:
        """What a call that ended without a result (cancelled) had changed, if anything."""
        recorder = self.running.pop(call_id, None)
        if recorder is None or not recorder.changes:
            return None
        self.stored.update(recorder.blobs)
        return list(recorder.changes.values()), dict(recorder.blobs)

    def digest(self, rel: str, mtime_ns: int, size: int) -> str | None:
        entry = self.entries.get(rel)
        return entry[2] if entry is not None and entry[:2] == (mtime_ns, size) else None

    def learn(self, root: str, rel: str, digest: str | None) -> None:
        if digest is None or digest == UNRECORDED:
            self.entries.pop(rel, None)
            return
        try:
            info = os.lstat(os.path.join(root, rel))
        except OSError:
            self.entries.pop(rel, None)
            return
        self.entries[rel] = (info.st_mtime_ns, info.st_size, digest)


def read_state(path: str, cap: int) -> tuple[str | None, bytes | None, str | None]:
    """(digest, content, note) of the file at `path` as it is now: (None, None, None)
    when there is none; (UNRECORDED, None, why) when it cannot be recorded."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None, None, None
    except OSError as exc:
        return UNRECORDED, None, f"it could not be read ({exc.strerror})"
    if not stat.S_ISREG(info.st_mode):
        return UNRECORDED, None, "it is not a regular file (a link, a directory or a device)"
    if info.st_size > cap:
        return UNRECORDED, None, f"it is larger than the {cap // 1024} KiB Tether records ({info.st_size} bytes)"
    try:
        with open(path, "rb") as handle:
            data = handle.read(cap + 1)
    except OSError as exc:
        return UNRECORDED, None, f"it could not be read ({exc.strerror})"
    if len(data) > cap:
        return UNRECORDED, None, f"it is larger than the {cap // 1024} KiB Tether records"
    return digest_of(data), data, None


def files_under(path: str) -> list[str]:
    """Absolute paths of the files (and links) at or below `path` (no recursion, no links followed)."""
    if not os.path.isdir(path) or os.path.islink(path):
        return [path] if os.path.lexists(path) else []
    found, stack = [], [path]
    while stack:
        try:
            entries = os.scandir(stack.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    found.append(entry.path)
    return found


class ChangeRecorder:
    """What one call changes, file by file, with the blobs to store."""

    def __init__(
        self, sandbox: WorkspaceSandbox, known: KnownFiles, cap: int = MAX_RECORDED_BYTES, call_id: str = ""
    ) -> None:
        self.sandbox, self.known, self.cap, self.call_id = sandbox, known, cap, call_id
        self.root = str(sandbox.root)
        if call_id:
            known.running[call_id] = self
        self.changes: dict[str, FileChange] = {}  # rel -> the call's change (first before, last after)
        self.blobs: dict[str, bytes] = {}
        self.notices: list[str] = []

    def wrap(self, files: FileIO) -> FileIO:
        return _RecordingFiles(files, self)

    # ---- file tools ------------------------------------------------------------------

    def workspace_path(self, path: str) -> str | None:
        """`path` relative to the workspace, or None when it is outside it."""
        try:
            return self.sandbox.relative(Path(path))
        except ToolError:
            return None

    def state(self, rel: str) -> tuple[str | None, str | None]:
        """(digest, note) of the file now, its content kept to store."""
        digest, data, note = read_state(os.path.join(self.root, rel), self.cap)
        self.keep(digest, data)
        return digest, note

    def keep(self, digest: str | None, data: bytes | None) -> None:
        if digest is not None and data is not None and digest not in self.known.stored:
            self.blobs[digest] = data

    def before(self, paths: list[str]) -> dict[str, tuple[str | None, str | None]]:
        """The states of `paths` (absolute) and every file below them, before a change."""
        found: dict[str, tuple[str | None, str | None]] = {}
        for path in paths:
            for name in files_under(path) or [path]:
                rel = self.workspace_path(name)
                if rel is not None and rel not in found:
                    found[rel] = self.state(rel)
        return found

    def after(self, states: dict[str, tuple[str | None, str | None]], extra: dict[str, str] | None = None) -> None:
        """Record each file of `states` (and, for a move, `extra`: new rel -> old rel) as it is now."""
        for rel, old_rel in [(r, None) for r in states] + list((extra or {}).items()):
            path = os.path.join(self.root, rel)
            if os.path.isdir(path) and not os.path.islink(path):
                continue  # a directory made by a move: its files are in `extra`
            before = states[rel] if old_rel is None else (None, None)
            digest, note = self.state(rel)
            self.add(rel, before[0], digest, before[1] or note)

    def written(self, states: dict[str, tuple[str | None, str | None]], path: str, text: str) -> None:
        """Record a text write: its content is what was written (an editor may hold it in an
        unsaved buffer); the disk's stat is learnt only when the disk holds it."""
        rel = self.workspace_path(path)
        if rel is None:
            return
        data = text.encode("utf-8", "surrogatepass")
        note = None
        if len(data) > self.cap:
            digest: str | None = UNRECORDED
            note = f"it is larger than the {self.cap // 1024} KiB Tether records ({len(data)} bytes)"
        else:
            digest = digest_of(data)
            self.keep(digest, data)
        before = states.get(rel, (None, None))
        on_disk = read_state(os.path.join(self.root, rel), self.cap)[0]
        self.add(rel, before[0], digest, before[1] or note, learn=on_disk == digest)

    def add(self, rel: str, before: str | None, after: str | None, note: str | None, *, learn: bool = True) -> None:
        previous = self.changes.get(rel)
        first = previous.before if previous is not None else before
        note = note or (previous.note if previous is not None else None)
        if first == after and note is None:
            self.changes.pop(rel, None)  # back to where it was
        else:
            self.changes[rel] = FileChange(rel, first, after, note)
        self.known.learn(self.root, rel, after if learn else None)

    # ---- run_command -----------------------------------------------------------------

    def scan_before(self) -> Before:
        from tether.tools.tree_scan import scan_before

        return scan_before(self.sandbox, self.known, self.cap)

    def scan_after(self, before: Before) -> None:
        from tether.tools.tree_scan import scan_after

        scan_after(self, before)

    # ---- the result ------------------------------------------------------------------

    def attach(self, result: ToolResult) -> ToolResult:
        """`result` with what was recorded, and a notice for what cannot be rewound."""
        self.known.running.pop(self.call_id, None)
        result.file_changes = list(self.changes.values())
        result.file_blobs = dict(self.blobs)
        self.known.stored.update(self.blobs)
        unrecorded = sorted({f"{c.path} ({c.note})" for c in self.changes.values() if c.note})
        notes = list(self.notices)
        if unrecorded:
            notes.append("not recorded, so a rewind cannot restore them: " + "; ".join(unrecorded[:10]))
        if notes:
            result.text += "\n[" + "]\n[".join(notes) + "]"
        return result


class _RecordingFiles:
    """A `FileIO` that records each file's content before and after every change."""

    def __init__(self, inner: FileIO, recorder: ChangeRecorder) -> None:
        self.inner, self.recorder = inner, recorder

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    async def read_text(self, path: Path) -> str:
        return await self.inner.read_text(path)

    async def write_text(self, path: Path, text: str) -> None:
        states = await anyio.to_thread.run_sync(self.recorder.before, [os.fspath(path)])
        await self.inner.write_text(path, text)  # nothing written if it fails
        await anyio.to_thread.run_sync(self.recorder.written, states, os.fspath(path), text)

    async def delete(self, path: Path) -> None:
        states = await anyio.to_thread.run_sync(self.recorder.before, [os.fspath(path)])
        try:
            await self.inner.delete(path)
        finally:
            await anyio.to_thread.run_sync(self.recorder.after, states)

    async def move(self, source: Path, target: Path) -> None:
        src, dst = os.fspath(source), os.fspath(target)
        states = await anyio.to_thread.run_sync(self.recorder.before, [src, dst])
        names = {os.path.join(dst, os.path.relpath(n, src)) if n != src else dst: n for n in files_under(src)}
        try:
            await self.inner.move(source, target)
        finally:
            extra = {}
            for new, old in names.items():
                new_rel, old_rel = self.recorder.workspace_path(new), self.recorder.workspace_path(old)
                if new_rel is not None and old_rel is not None and new_rel not in states:
                    extra[new_rel] = old_rel
            await anyio.to_thread.run_sync(self.recorder.after, states, extra)
