"""Session snapshots, forks, search and "the latest session" on the wire.

    _tether/session/dump     {sessionId, cwd?}                        -> snapshot
    _tether/session/restore  {snapshot, cwd?, keepId?, importRules?}  -> {sessionId, rules}
    session/fork (ACP)       {sessionId, cwd?}                        -> {sessionId, modes}
    _tether/session/fork     {sessionId, messageSeq?, cwd?}           -> {sessionId, modes}
    _tether/session/search   {query, cwd?, limit?}                    -> {hits}
    _tether/session/latest   {cwd?}                                   -> {sessionId, title, updatedAt, cwd}

Owns: where to look for the session (live in this daemon, else stored in the `cwd` workspace, else
in the default one), and mapping the sessions service's errors to -32602 / -32002 (the params arrive checked
and typed: `tether_protocol._snapshots`, `_sessions.ForkSessionParams`). Must
not: know the snapshot format (`tether.store.snapshots` does), decide the restore policy
(`sessions_service.py` does, for the CLI too) or write SQL.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

from tether_protocol._errors import InvalidParams, SessionNotFound
from tether_protocol._extensions import RuleDecision
from tether_protocol._gc import collector_paused
from tether_protocol._sessions import ForkSessionParams, NewSessionResult
from tether_protocol._snapshots import (
    DumpParams,
    LatestParams,
    LatestResult,
    LatestSession,
    MessageRole,
    NoLatestSession,
    RestoredRule,
    RestoreParams,
    RestoreResult,
    SearchHit,
    SearchParams,
    SearchResult,
    TetherForkParams,
)

from ..store import HistoryStore, StorageFault, StoreError, export_session_json
from ..transport.rpc import RawResult
from .config_options import config_options
from .context import ServerContext
from .registry import check_workspace
from .sessions import iso, modes
from .sessions_service import (
    BadForkPoint,
    BadSnapshot,
    RestoreFailed,
    SessionGone,
    checked_snapshot,
    restore_workspace,
)


def _default_workspace(ctx: ServerContext) -> Path:
    return check_workspace(str(ctx.default_root))


def _workspace_of(ctx: ServerContext, cwd: str | None) -> Path:
    return check_workspace(cwd) if cwd is not None else _default_workspace(ctx)


async def _locate(ctx: ServerContext, session_id: str, cwd: str | None) -> tuple[HistoryStore, Path]:
    """A session's store and workspace: live here, else stored in `cwd`'s or the default workspace."""
    places: list[Path] = []
    if session_id not in ctx.registry.live:  # a live one is found whatever cwd says
        places = [check_workspace(cwd)] if cwd is not None else []
        if _default_workspace(ctx) not in places:
            places.append(_default_workspace(ctx))
    try:
        return await ctx.sessions.locate(session_id, places)
    except SessionGone as exc:
        raise SessionNotFound(str(exc)) from exc


async def session_dump(ctx: ServerContext, params: DumpParams) -> RawResult:
    session_id = params.session_id
    store, _workspace = await _locate(ctx, session_id, params.cwd)
    try:
        # the snapshot's JSON straight from the stored JSON (no decoding and encoding)
        with collector_paused():  # rows and text of every message, no cycles
            return RawResult(await export_session_json(store, session_id))
    except StorageFault:
        raise  # the history cannot be read: -32015, not "unknown session"
    except StoreError as exc:  # deleted meanwhile
        raise SessionNotFound(f"unknown session {session_id!r}: {exc}") from exc


async def session_restore(ctx: ServerContext, params: RestoreParams) -> RestoreResult:
    # checked copies and rows of every message, none in a cycle
    with collector_paused():
        return await _restore(ctx, params)


async def _restore(ctx: ServerContext, params: RestoreParams) -> RestoreResult:
    try:
        snapshot = checked_snapshot(params.snapshot)  # raw JSON: the store's checks and messages
    except BadSnapshot as exc:
        raise InvalidParams(f"invalid snapshot: {exc}") from exc
    cwd = params.cwd
    workspace = restore_workspace(
        snapshot, check_workspace(cwd) if cwd is not None else None, lambda: _default_workspace(ctx)
    )
    if params.keep_id and snapshot["session"]["id"] in ctx.registry.live:
        raise InvalidParams(
            f"invalid snapshot: session {snapshot['session']['id']!r} is live in this daemon; "
            f"restore it without keepId"
        )

    async def add_rule(store: HistoryStore, kind: str, pattern: str, decision: str) -> object:
        # through the gate, so its cached rules see the new ones at once
        return await ctx.gate_for(workspace, store).add_rule(kind, pattern, decision)

    try:
        restored = await ctx.sessions.restore(
            snapshot, workspace, mode_limit=ctx.settings.mode, keep_id=params.keep_id,
            import_rules=params.import_rules, add_rule=add_rule,
        )
    except RestoreFailed as exc:
        raise InvalidParams(f"invalid snapshot: {exc}") from exc
    return RestoreResult(
        restored.session_id,
        str(restored.workspace),
        restored.mode,
        [RestoredRule(r.kind, r.pattern, cast(RuleDecision, r.decision), r.imported) for r in restored.rules],
    )


async def _fork(
    ctx: ServerContext, source_id: str, cwd: str | None, upto_seq: int | None, target: Path | None
) -> NewSessionResult:
    store, workspace = await _locate(ctx, source_id, cwd)
    target = target or workspace
    try:
        new_id = await ctx.sessions.fork(store, source_id, workspace, target, upto_seq)
    except BadForkPoint as exc:
        raise InvalidParams(f"invalid params for _tether/session/fork: {exc}") from exc  # only its messageSeq
    except SessionGone as exc:
        raise SessionNotFound(str(exc)) from exc
    session, _stored = await ctx.registry.revive(new_id, target)
    return NewSessionResult(new_id, modes(session.mode), config_options(ctx, session))


async def session_fork(ctx: ServerContext, params: ForkSessionParams) -> NewSessionResult:
    cwd = params.cwd
    return await _fork(ctx, params.session_id, cwd, None, check_workspace(cwd) if cwd is not None else None)


async def tether_session_fork(ctx: ServerContext, params: TetherForkParams) -> NewSessionResult:
    return await _fork(ctx, params.session_id, params.cwd, params.message_seq, None)


async def session_search(ctx: ServerContext, params: SearchParams) -> SearchResult:
    limit = params.limit or 20
    hits = await ctx.sessions.search(_workspace_of(ctx, params.cwd), params.query, limit)
    return SearchResult([
        SearchHit(h.session_id, h.session_title, h.message_seq, cast(MessageRole, h.role), h.snippet, h.rank)
        for h in hits
    ])


async def session_latest(ctx: ServerContext, params: LatestParams) -> LatestResult:
    record = await ctx.sessions.latest(_workspace_of(ctx, params.cwd))
    if record is None:
        return NoLatestSession(None)
    return LatestSession(record.id, iso(record.updated_at), record.workspace, title=record.title)
