"""Session snapshots, forks, search and "the latest session" on the wire (`_tether/session/dump|restore|
fork|search|latest`, ACP `session/fork`; SPEC §3.27-§3.32).

Owns: where to look for the session (live, else stored in `cwd`'s workspace, else the default)
and mapping the sessions service's errors to -32602 / -32002.
Must not: know the snapshot format (`tether.store.snapshots`), decide the restore policy, or write SQL.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, cast

from tether_protocol import (
    DumpedFile,
    DumpParams,
    ForkSessionParams,
    InvalidParams,
    LatestParams,
    LatestResult,
    LatestSession,
    MessageRole,
    NewSessionResult,
    NoLatestSession,
    RestoredRule,
    RestoreParams,
    RestoreResult,
    RuleDecision,
    SearchHit,
    SearchParams,
    SearchResult,
    SessionNotFound,
    TetherForkParams,
    collector_paused,
)

from ..services.config_options import config_options
from ..services.registry import check_workspace
from ..services.sessions_service import (
    BadForkPoint,
    BadSnapshot,
    RestoreFailed,
    SessionGone,
    checked_snapshot,
    read_snapshot,
    restore_workspace,
)
from ..store import HistoryStore, StorageFault, StoreError, export_session_json
from ..store.snapshot_export import dump_to_file
from ..store.snapshot_reader import SnapshotReader
from ..transport.rpc import RawResult
from .sessions import iso, modes

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..server.context import ClientConnection
    from ..store.snapshots import SnapshotFile


def _default_workspace(ctx: ClientConnection) -> Path:
    return check_workspace(str(ctx.default_root))


def _workspace_of(ctx: ClientConnection, cwd: str | None) -> Path:
    return check_workspace(cwd) if cwd is not None else _default_workspace(ctx)


async def _locate(ctx: ClientConnection, session_id: str, cwd: str | None) -> tuple[HistoryStore, Path]:
    """A session's store and workspace: live here, else stored in `cwd`'s or the default workspace."""
    places: list[Path] = []
    if session_id not in ctx.daemon.registry.live:  # a live one is found whatever cwd says
        places = [check_workspace(cwd)] if cwd is not None else []
        if _default_workspace(ctx) not in places:
            places.append(_default_workspace(ctx))
    try:
        return await ctx.daemon.sessions.locate(session_id, places)
    except SessionGone as exc:
        raise SessionNotFound(str(exc)) from exc


async def session_dump(ctx: ClientConnection, params: DumpParams) -> RawResult | DumpedFile:
    session_id = params.session_id
    target = None if params.path is None else _new_file(params.path)
    store, _workspace = await _locate(ctx, session_id, params.cwd)
    try:
        if target is not None:
            messages, size = await dump_to_file(store, session_id, target, replace=False)
            return DumpedFile(str(target), messages, size)
        # the snapshot's JSON straight from the stored JSON (no decoding and encoding)
        with collector_paused():  # rows and text of every message, no cycles
            return RawResult(await export_session_json(store, session_id))
    except StorageFault:
        raise  # the history cannot be read: -32015, not "unknown session"
    except StoreError as exc:  # deleted meanwhile
        raise SessionNotFound(f"unknown session {session_id!r}: {exc}") from exc
    except FileExistsError as exc:
        raise InvalidParams(
            f"invalid params for _tether/session/dump: path {str(target)!r} already exists "
            f"(appeared meanwhile); name a new file"
        ) from exc
    except OSError as exc:
        raise InvalidParams(
            f"invalid params for _tether/session/dump: cannot write {str(target)!r}: {exc.strerror or exc}"
        ) from exc


def _new_file(path: str) -> Path:
    """A dump's file: absolute, in a directory that exists, not there yet."""
    where = f"invalid params for _tether/session/dump: path {path!r}"
    target = Path(path)
    if not target.is_absolute():
        raise InvalidParams(f"{where} must be absolute (the daemon's working directory is not the client's)")
    if not target.parent.is_dir():
        raise InvalidParams(f"{where}: no directory {str(target.parent)!r}; create it first")
    if os.path.lexists(target):
        raise InvalidParams(f"{where} already exists; name a new file (a dump never overwrites one)")
    return target


async def session_restore(ctx: ClientConnection, params: RestoreParams) -> RestoreResult:
    if (params.snapshot is None) == (params.path is None):
        raise InvalidParams(
            "invalid params for _tether/session/restore: snapshot (an object from _tether/session/dump) "
            "or path (a file it wrote) is required, not both"
        )
    if params.path is None:
        # checked copies and rows of every message, none in a cycle
        with collector_paused():
            return await _restore(ctx, params, lambda: checked_snapshot(params.snapshot))
    path = params.path
    with _snapshot_file(path) as source:
        return await _restore(ctx, params, lambda: read_snapshot(SnapshotReader(source, path)))


def _snapshot_file(path: str) -> BinaryIO:
    where = f"invalid params for _tether/session/restore: path {path!r}"
    if not os.path.isabs(path):
        raise InvalidParams(f"{where} must be absolute (the daemon's working directory is not the client's)")
    try:
        # not blocking: opening a planted FIFO would wait for a writer, and stop the daemon with it
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise InvalidParams(f"{where} cannot be read: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InvalidParams(f"{where} is not a file")
    os.set_blocking(fd, True)
    return open(fd, "rb")


async def _restore(ctx: ClientConnection, params: RestoreParams, opened: Callable[[], SnapshotFile]) -> RestoreResult:
    try:
        snapshot = opened()  # raw JSON: the store's checks and messages
    except BadSnapshot as exc:
        raise InvalidParams(f"invalid snapshot: {exc}") from exc
    cwd = params.cwd
    workspace = restore_workspace(
        snapshot, check_workspace(cwd) if cwd is not None else None, lambda: _default_workspace(ctx)
    )
    if params.keep_id and snapshot.session["id"] in ctx.daemon.registry.live:
        raise InvalidParams(
            f"invalid snapshot: session {snapshot.session['id']!r} is live in this daemon; restore it without keepId"
        )

    async def add_rule(store: HistoryStore, kind: str, pattern: str, decision: str) -> object:
        # through the gate, so its cached rules see the new ones at once
        return await ctx.gate_for(workspace, store).add_rule(kind, pattern, decision)

    try:
        restored = await ctx.daemon.sessions.restore(
            snapshot,
            workspace,
            mode_limit=ctx.settings.mode,
            keep_id=params.keep_id,
            import_rules=params.import_rules,
            add_rule=add_rule,
        )
    except RestoreFailed as exc:
        raise InvalidParams(f"invalid snapshot: {exc}") from exc
    return RestoreResult(
        restored.session_id,
        str(restored.workspace),
        restored.mode,
        [RestoredRule(r.kind, r.pattern, cast("RuleDecision", r.decision), r.imported) for r in restored.rules],
    )


async def _fork(
    ctx: ClientConnection, source_id: str, cwd: str | None, upto_seq: int | None, target: Path | None
) -> NewSessionResult:
    store, workspace = await _locate(ctx, source_id, cwd)
    target = target or workspace
    try:
        new_id = await ctx.daemon.sessions.fork(store, source_id, workspace, target, upto_seq)
    except BadForkPoint as exc:
        raise InvalidParams(f"invalid params for _tether/session/fork: {exc}") from exc  # only its messageSeq
    except SessionGone as exc:
        raise SessionNotFound(str(exc)) from exc
    session, _stored = await ctx.daemon.registry.revive(new_id, target)
    return NewSessionResult(new_id, modes(session.mode), config_options(ctx, session))


async def session_fork(ctx: ClientConnection, params: ForkSessionParams) -> NewSessionResult:
    cwd = params.cwd
    return await _fork(ctx, params.session_id, cwd, None, check_workspace(cwd) if cwd is not None else None)


async def tether_session_fork(ctx: ClientConnection, params: TetherForkParams) -> NewSessionResult:
    return await _fork(ctx, params.session_id, params.cwd, params.message_seq, None)


async def session_search(ctx: ClientConnection, params: SearchParams) -> SearchResult:
    limit = params.limit or 20
    hits = await ctx.daemon.sessions.search(_workspace_of(ctx, params.cwd), params.query, limit)
    return SearchResult(
        [
            SearchHit(h.session_id, h.session_title, h.message_seq, cast("MessageRole", h.role), h.snippet, h.rank)
            for h in hits
        ]
    )


async def session_latest(ctx: ClientConnection, params: LatestParams) -> LatestResult:
    record = await ctx.daemon.sessions.latest(_workspace_of(ctx, params.cwd))
    if record is None:
        return NoLatestSession(None)
    return LatestSession(record.id, iso(record.updated_at), record.workspace, title=record.title)
