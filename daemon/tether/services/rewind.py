"""Rewind and changes: taking a session back to a turn, and what its turns changed.

Owns: the point a rewind goes back to, which messages the model sees after, which files go back
to what, refusing files changed since (unless `force`), restoring them safely, recording the
rewind so it can be undone, and `changes` with diffs (the rules: docs/decisions/0018).
Must not: speak the protocol (`rewind_rpc.py`), write SQL, or run while a turn of the session runs.
"""

from __future__ import annotations

import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import anyio.to_thread

from ..store import HistoryStore
from ..store import checkpoints as cp
from ..tools.changes import UNRECORDED, read_state
from ..tools.diffs import cap_diff, unified_diff
from ..tools.disk_io import editable_text
from ..tools.sandbox import SandboxError, WorkspaceSandbox

__all__ = ["BadRewind", "Changed", "RewindBusy", "RewindOutcome", "changes", "rewind"]


# a file's current content is read whole to compare it (the recording cap is a setting, up to this)
_READ_CAP = 1024 * 1024 * 1024


class BadRewind(Exception):
    """The point to go back to does not exist or is not a user message; the message says why."""


class RewindBusy(Exception):
    """A turn of the session is running (or waiting for approval)."""


@dataclass(slots=True)
class RewindOutcome:
    rewind_id: int | None
    restored: list[str] = field(default_factory=list)
    conflicts: list[tuple[str, str]] = field(default_factory=list)  # (path, diff)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    hidden: int = 0
    done: bool = False
    digests: dict[str, str | None] = field(default_factory=dict)  # path -> what it holds now


@dataclass(frozen=True, slots=True)
class _Point:
    cut: int  # the first message seq after the point
    first_rewind: cp.RewindRow | None  # the first rewind after the point


@dataclass(slots=True)
class _File:
    path: str
    target: str | None  # digest to restore (None: no file)
    expected: str | None  # digest Tether last left there
    note: str | None = None
    current: str | None = None
    data: bytes | None = None  # the current content, when recorded


async def _point(store: HistoryStore, session_id: str, turn: int | None, seq: int | None, rewind: int | None) -> _Point:
    given = [v for v in (turn, seq, rewind) if v is not None]
    if len(given) != 1:
        raise BadRewind("give exactly one of toTurn, messageSeq and toRewind")
    rewinds = await cp.rewinds(store, session_id)
    if rewind is not None:
        found = next((r for r in rewinds if r.id == rewind), None)
        if found is None:
            raise BadRewind(f"session {session_id} has no rewind {rewind}; `changes` and rewind answers give their ids")
        return _Point(found.at_seq, found)
    if turn is not None:
        start = await cp.turn_start_seq(store, session_id, turn)
        if start is None:
            raise BadRewind(f"session {session_id} has no turn {turn}; turns are numbered from 1")
        cut = start
    else:
        assert seq is not None  # exactly one of the three is given (checked above)
        if await cp.message_role(store, session_id, seq) != "user":
            raise BadRewind(f"messageSeq {seq} is not a user message of session {session_id}; rewind to a user message")
        cut = seq
    return _Point(cut, next((r for r in rewinds if r.at_seq > cut), None))


def _plan(rows: list[cp.ChangeRow], point: _Point) -> list[_File]:
    """Each file changed after the point: its content at the point and the one Tether left."""
    first_rewind = point.first_rewind.id if point.first_rewind is not None else None
    after = [
        r
        for r in rows
        if (r.seq is not None and r.seq >= point.cut)
        or (first_rewind is not None and (r.rewind_id or 0) >= first_rewind)
    ]
    if not after:
        return []
    start = min(r.id for r in after)
    files: dict[str, _File] = {}
    for row in rows:
        if row.id < start:
            continue
        if row.path not in files:
            files[row.path] = _File(row.path, row.before, row.after, row.note if row.before == UNRECORDED else None)
        files[row.path].expected = row.after
    return list(files.values())


def _hidden(point: _Point, now: cp.Ranges, at_seq: int) -> cp.Ranges:
    base = point.first_rewind.hidden_before if point.first_rewind is not None else now
    kept = [(lo, min(hi, point.cut)) for lo, hi in base if lo < point.cut]
    if point.cut < at_seq:
        kept.append((point.cut, at_seq))
    return cp.ranges_of(sorted({s for lo, hi in kept for s in range(lo, hi)}))


def _count(ranges: cp.Ranges) -> set[int]:
    return {s for lo, hi in ranges for s in range(lo, hi)}


async def rewind(
    store: HistoryStore,
    session_id: str,
    workspace: str,
    *,
    to_turn: int | None = None,
    message_seq: int | None = None,
    to_rewind: int | None = None,
    restore: str = "both",
    force: bool = False,
    dry_run: bool = False,
) -> RewindOutcome:
    """Take the session back to the point (see the module docstring); refused while a turn runs."""
    if await cp.turn_running(store, session_id):
        raise RewindBusy(f"session {session_id} has a turn running or waiting for approval; cancel it first")
    point = await _point(store, session_id, to_turn, message_seq, to_rewind)
    files = _plan(await cp.change_rows(store, session_id), point) if restore != "conversation" else []
    targets = await cp.blobs(store, [f.target for f in files if f.target not in (None, UNRECORDED)])
    sandbox = _sandbox(store, workspace)
    outcome = await anyio.to_thread.run_sync(_check, sandbox, files, targets)
    now, at_seq = await cp.hidden_now(store, session_id), await cp.next_seq(store, session_id)
    hidden = _hidden(point, now, at_seq) if restore != "files" else now
    outcome.hidden = len(_count(hidden) - _count(now))
    if dry_run or (outcome.conflicts and not force):
        return outcome
    restoring = [f for f in files if f.path in outcome.restored]
    rows, blobs, failed = await anyio.to_thread.run_sync(_restore, str(sandbox.root), restoring, targets)
    outcome.skipped += failed
    outcome.restored = [row[0] for row in rows]
    outcome.digests = {row[0]: row[2] for row in rows}
    outcome.rewind_id = await cp.apply_rewind(
        store, session_id, cp.NewRewind(at_seq, point.cut, restore, now, hidden, tuple(rows), blobs)
    )
    outcome.done = True
    return outcome


def _sandbox(store: HistoryStore, workspace: str) -> WorkspaceSandbox:
    """The workspace as the file tools see it: Tether's config and the history's home are
    out of reach (a restored snapshot can name `.config/tether/config.toml` in a home folder)."""
    from ..store.paths import home_of_database
    from .registry import private_paths

    return WorkspaceSandbox(Path(workspace), private_paths(home_of_database(store.path)))


def _check(sandbox: WorkspaceSandbox, files: list[_File], targets: dict[str, bytes]) -> RewindOutcome:
    outcome = RewindOutcome(None)
    for f in files:
        if f.target == UNRECORDED or (f.target is not None and f.target not in targets):
            outcome.skipped.append((f.path, f.note or "its earlier content was not recorded"))
            continue
        path = _safe(sandbox, f.path)
        if path is None:
            outcome.skipped.append(
                (
                    f.path,
                    "it is under .git, outside the workspace, reached through a link out of it, "
                    "or Tether's own configuration or history",
                )
            )
            continue
        f.current, f.data, _note = read_state(path, _READ_CAP)
        if f.current == f.target:
            continue  # already as it was
        if os.path.isdir(path) and not os.path.islink(path):
            outcome.skipped.append((f.path, "it is a directory now"))
            continue
        if f.current != f.expected or f.expected == UNRECORDED:
            outcome.conflicts.append((f.path, _diff(f.path, f.data, targets.get(f.target or ""), f.current, f.target)))
        outcome.restored.append(f.path)
    return outcome


def _diff(rel: str, old: bytes | None, new: bytes | None, old_digest: str | None, new_digest: str | None) -> str:
    old_text = "" if old is None else editable_text(old)
    new_text = "" if new is None else editable_text(new)
    if old_text is None or new_text is None or (old is None and old_digest is not None):
        return ""  # binary, or too large to have been read
    return cap_diff(unified_diff(old_text, new_text, rel, created=old_digest is None, deleted=new_digest is None))


def _safe(sandbox: WorkspaceSandbox, rel: str) -> str | None:
    """The absolute path of `rel` (the link itself when it is one), or None when `rel` is
    not a plain workspace-relative name, lies under `.git`, leads out of the workspace
    through a link (of its directory or of itself) or into Tether's own files."""
    if ".git" in rel.lower().split("/") or rel.startswith("/") or ".." in rel.split("/"):
        return None
    try:
        sandbox.check_not_under_git(sandbox.resolve(rel))  # NUL, too long, outside, Tether's own
    except SandboxError:
        return None
    return os.path.join(sandbox.root, rel)


_Row = tuple[str, str | None, str | None, str | None]


def _restore(
    workspace: str, files: list[_File], targets: dict[str, bytes]
) -> tuple[list[_Row], dict[str, bytes], list[tuple[str, str]]]:
    """Put each file back; the rewind's rows (what it overwrote -> what it restored), the
    blobs they need, and the files that could not be written (path, why)."""
    rows: list[_Row] = []
    blobs: dict[str, bytes] = {}
    failed: list[tuple[str, str]] = []
    for f in files:
        path = os.path.join(os.path.realpath(workspace), f.path)
        try:
            if f.target is None:
                if os.path.lexists(path) and not os.path.isdir(path):
                    os.unlink(path)
            else:
                _write(path, targets[f.target])
        except OSError as exc:
            failed.append((f.path, f"it could not be written ({exc.strerror or exc})"))
            continue
        if f.current not in (None, UNRECORDED) and f.data is not None and f.current is not None:
            blobs[f.current] = f.data
        note = "what the rewind overwrote was not recorded" if f.current == UNRECORDED else None
        rows.append((f.path, f.current, f.target, note))
    return rows, blobs, failed


def _write(path: str, data: bytes) -> None:
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(os.lstat(path).st_mode)
    except FileNotFoundError:
        mode = None
    temp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(4)}.tether-tmp")
    with open(temp, "xb") as handle:
        handle.write(data)
        handle.flush()
        if mode is not None:
            os.fchmod(handle.fileno(), mode)
        os.fsync(handle.fileno())
    try:
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


@dataclass(slots=True)
class Changed:
    path: str
    status: Literal["added", "modified", "deleted"]
    diff: str
    turns: list[int]
    note: str | None


async def turn_seq(store: HistoryStore, session_id: str, turn: int | str | None) -> tuple[int | None, dict[str, int]]:
    """``turn`` (a seq or a turnId) as its seq, with the session's turns (id -> seq);
    BadRewind when the session has no such turn (`changes` and rewind refuse it alike)."""
    seqs = await cp.turn_seqs(store, session_id)
    seq = seqs.get(turn) if isinstance(turn, str) else turn
    if turn is not None and (seq is None or seq not in seqs.values()):
        last = f"its turns are 1 to {len(seqs)}" if seqs else "it has no turns yet"
        raise BadRewind(
            f"session {session_id} has no turn {turn!r}; {last} (a turn's seq, or the turnId session/prompt answers)"
        )
    return seq, seqs


async def changes(store: HistoryStore, session_id: str, turn: int | None = None) -> list[Changed]:
    """What turn `turn` (its seq) changed, file by file, or the whole session (its rewinds included)."""
    rows = [r for r in await cp.change_rows(store, session_id) if turn is None or r.turn == turn]
    net: dict[str, list[cp.ChangeRow]] = {}
    for row in rows:
        net.setdefault(row.path, []).append(row)
    blobs = await cp.blobs(store, [d for r in rows for d in (r.before, r.after) if d not in (None, UNRECORDED)])
    found = []
    for path, its in sorted(net.items()):
        before, after = its[0].before, its[-1].after
        note = next((r.note for r in its if r.note), None)
        if before == after and note is None:
            continue
        status: Literal["added", "modified", "deleted"] = (
            "added" if before is None else "deleted" if after is None else "modified"
        )
        diff = _diff(path, blobs.get(before or ""), blobs.get(after or ""), before, after)
        found.append(Changed(path, status, diff, sorted({r.turn for r in its if r.turn is not None}), note))
    return found
