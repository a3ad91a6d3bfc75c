"""Session snapshots, forks, search and "the latest session" on the wire.

    _tether/session/dump     {sessionId, cwd?}                        -> snapshot
    _tether/session/restore  {snapshot, cwd?, keepId?, importRules?}  -> {sessionId, rules}
    session/fork (ACP)       {sessionId, cwd?}                        -> {sessionId, modes}
    _tether/session/fork     {sessionId, messageSeq?, cwd?}           -> {sessionId, modes}
    _tether/session/search   {query, cwd?, limit?}                    -> {hits}
    _tether/session/latest   {cwd?}                                   -> {sessionId, title, updatedAt, cwd}

Owns: checking these params by hand (until tether_protocol has classes for them), where
to look for the session (live in this daemon, else stored in the `cwd` workspace, else
in the default one), and mapping the sessions service's errors to -32602 / -32002. Must
not: know the snapshot format (`tether.store.snapshots` does), decide the restore policy
(`sessions_service.py` does, for the CLI too) or write SQL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tether_protocol._errors import InvalidParams, SessionNotFound
from tether_protocol._gc import collector_paused
from tether_protocol._messages import NewSessionResult

from ..store import HistoryStore, StorageFault, StoreError, export_session_json
from ..transport.rpc import RawResult
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

_MAX_LIMIT = 200


def _object(params: Any) -> dict[str, Any]:
    return params if isinstance(params, dict) else {}


def _string(params: dict[str, Any], key: str, method: str, *, required: bool = True) -> str | None:
    value = params.get(key)
    if value is None and not required:
        return None
    if required and (not isinstance(value, str) or not value):
        raise InvalidParams(f"invalid params for {method}: {key} (a non-empty string) is required")
    if not isinstance(value, str):
        raise InvalidParams(f"invalid params for {method}: {key} must be a string")
    return value


def _integer(params: dict[str, Any], key: str, method: str, low: int, high: int | None) -> int | None:
    value = params.get(key)
    if value is None:
        return None
    wrong = not isinstance(value, int) or isinstance(value, bool)
    if wrong or value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise InvalidParams(f"invalid params for {method}: {key} must be an integer {bound}")
    return int(value)


def _flag(params: dict[str, Any], key: str, method: str) -> bool:
    value = params.get(key, False)
    if not isinstance(value, bool):
        raise InvalidParams(f"invalid params for {method}: {key} must be a boolean")
    return value


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


async def session_dump(ctx: ServerContext, params: Any) -> RawResult:
    method = "_tether/session/dump"
    p = _object(params)
    session_id = _string(p, "sessionId", method)
    assert session_id is not None
    store, _workspace = await _locate(ctx, session_id, _string(p, "cwd", method, required=False))
    try:
        # the snapshot's JSON straight from the stored JSON (no decoding and encoding)
        with collector_paused():  # rows and text of every message, no cycles
            return RawResult(await export_session_json(store, session_id))
    except StorageFault:
        raise  # the history cannot be read: -32015, not "unknown session"
    except StoreError as exc:  # deleted meanwhile
        raise SessionNotFound(f"unknown session {session_id!r}: {exc}") from exc


async def session_restore(ctx: ServerContext, params: Any) -> dict[str, Any]:
    # checked copies and rows of every message, none in a cycle
    with collector_paused():
        return await _restore(ctx, params)


async def _restore(ctx: ServerContext, params: Any) -> dict[str, Any]:
    method = "_tether/session/restore"
    p = _object(params)
    if "snapshot" not in p:
        raise InvalidParams(
            f"invalid params for {method}: snapshot (an object from _tether/session/dump) is required"
        )
    cwd = _string(p, "cwd", method, required=False)
    keep_id = _flag(p, "keepId", method)
    import_rules = _flag(p, "importRules", method)
    try:
        snapshot = checked_snapshot(p["snapshot"])
    except BadSnapshot as exc:
        raise InvalidParams(f"invalid snapshot: {exc}") from exc
    workspace = restore_workspace(
        snapshot, check_workspace(cwd) if cwd is not None else None, lambda: _default_workspace(ctx)
    )
    if keep_id and snapshot["session"]["id"] in ctx.registry.live:
        raise InvalidParams(
            f"invalid snapshot: session {snapshot['session']['id']!r} is live in this daemon; "
            f"restore it without keepId"
        )

    async def add_rule(store: HistoryStore, kind: str, pattern: str, decision: str) -> object:
        # through the gate, so its cached rules see the new ones at once
        return await ctx.gate_for(workspace, store).add_rule(kind, pattern, decision)

    try:
        restored = await ctx.sessions.restore(
            snapshot, workspace, mode_limit=ctx.settings.mode, keep_id=keep_id,
            import_rules=import_rules, add_rule=add_rule,
        )
    except RestoreFailed as exc:
        raise InvalidParams(f"invalid snapshot: {exc}") from exc
    return {
        "sessionId": restored.session_id,
        "cwd": str(restored.workspace),
        "mode": restored.mode,
        "rules": [
            {"kind": r.kind, "pattern": r.pattern, "decision": r.decision, "imported": r.imported}
            for r in restored.rules
        ],
    }


async def _fork(
    ctx: ServerContext, source_id: str, cwd: str | None, upto_seq: int | None, target: Path | None
) -> NewSessionResult:
    store, workspace = await _locate(ctx, source_id, cwd)
    target = target or workspace
    try:
        new_id = await ctx.sessions.fork(store, source_id, workspace, target, upto_seq)
    except BadForkPoint as exc:
        raise InvalidParams(f"invalid params: {exc}") from exc
    except SessionGone as exc:
        raise SessionNotFound(str(exc)) from exc
    session, _stored = await ctx.registry.revive(new_id, target)
    return NewSessionResult(new_id, modes(session.mode))


async def session_fork(ctx: ServerContext, params: Any) -> NewSessionResult:
    method = "session/fork"
    p = _object(params)
    session_id = _string(p, "sessionId", method)
    cwd = _string(p, "cwd", method, required=False)
    assert session_id is not None
    return await _fork(ctx, session_id, cwd, None, check_workspace(cwd) if cwd is not None else None)


async def tether_session_fork(ctx: ServerContext, params: Any) -> NewSessionResult:
    method = "_tether/session/fork"
    p = _object(params)
    session_id = _string(p, "sessionId", method)
    assert session_id is not None
    upto = _integer(p, "messageSeq", method, 0, None)
    return await _fork(ctx, session_id, _string(p, "cwd", method, required=False), upto, None)


async def session_search(ctx: ServerContext, params: Any) -> dict[str, Any]:
    method = "_tether/session/search"
    p = _object(params)
    query = _string(p, "query", method)
    assert query is not None
    limit = _integer(p, "limit", method, 1, _MAX_LIMIT) or 20
    hits = await ctx.sessions.search(_workspace_of(ctx, _string(p, "cwd", method, required=False)), query, limit)
    return {
        "hits": [
            {
                "sessionId": h.session_id,
                "sessionTitle": h.session_title,
                "messageSeq": h.message_seq,
                "role": h.role,
                "snippet": h.snippet,
                "rank": h.rank,
            }
            for h in hits
        ]
    }


async def session_latest(ctx: ServerContext, params: Any) -> dict[str, Any]:
    method = "_tether/session/latest"
    record = await ctx.sessions.latest(_workspace_of(ctx, _string(_object(params), "cwd", method, required=False)))
    if record is None:
        return {"sessionId": None}
    return {
        "sessionId": record.id,
        "title": record.title,
        "updatedAt": iso(record.updated_at),
        "cwd": record.workspace,
    }
