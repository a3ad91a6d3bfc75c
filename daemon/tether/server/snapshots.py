"""Session snapshots, forks, search and "the latest session" on the wire.

    _tether/session/dump     {sessionId, cwd?}                        -> snapshot
    _tether/session/restore  {snapshot, cwd?, keepId?, importRules?}  -> {sessionId, rules}
    session/fork (ACP)       {sessionId, cwd?}                        -> {sessionId, modes}
    _tether/session/fork     {sessionId, messageSeq?, cwd?}           -> {sessionId, modes}
    _tether/session/search   {query, cwd?, limit?}                    -> {hits}
    _tether/session/latest   {cwd?}                                   -> {sessionId, title, updatedAt, cwd}

Owns: checking these params by hand, finding the session (live in this daemon, else
stored in the `cwd` workspace, else in the default one) and the workspace a restored
session goes to, and mapping snapshot errors to -32602. Must not: know the snapshot
format (`tether.store.snapshots` does) or write SQL.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether_protocol._errors import InvalidParams, SessionNotFound
from tether_protocol._gc import collector_paused

from ..config import MODES, no_looser_mode
from ..store import (
    HistoryStore,
    SnapshotError,
    StorageFault,
    StoreError,
    export_session_json,
    fork_session,
    import_session,
    search,
)
from ..store.snapshots import check_snapshot
from ..transport.rpc import RawResult, Route
from .handshake import modes_state
from .registry import check_workspace
from .sessions import iso

if TYPE_CHECKING:
    from .app import TetherServer

# What `importRules` may add: the kinds the approval gate knows, with a non-empty pattern.
_RULE_KINDS = frozenset({"execute", "edit", "delete", "move"})
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
    return value


def _flag(params: dict[str, Any], key: str, method: str) -> bool:
    value = params.get(key, False)
    if not isinstance(value, bool):
        raise InvalidParams(f"invalid params for {method}: {key} must be a boolean")
    return value


def routes(server: TetherServer) -> list[Route]:
    registry = server.registry

    def default_workspace() -> Path:
        return check_workspace(str(server.default_root))

    def workspace_of(cwd: str | None) -> Path:
        return check_workspace(cwd) if cwd is not None else default_workspace()

    async def locate(session_id: str, cwd: str | None) -> tuple[HistoryStore, Path]:
        """A session's store and workspace: live here, else stored in `cwd`'s or the default workspace."""
        live = registry.live.get(session_id)
        if live is not None:
            return live.store, live.workspace
        places = [check_workspace(cwd)] if cwd is not None else []
        if default_workspace() not in places:
            places.append(default_workspace())
        for workspace in places:
            store = await registry.store_for(workspace)
            if await store.get_session(session_id) is not None:
                return store, workspace
        where = " or ".join(str(p) for p in places)
        raise SessionNotFound(
            f"unknown session {session_id!r}: not live in this daemon and not stored in workspace "
            f"{where}; pass the workspace it belongs to as cwd"
        )

    async def dump(params: Any) -> RawResult:
        method = "_tether/session/dump"
        p = _object(params)
        session_id = _string(p, "sessionId", method)
        assert session_id is not None
        store, _workspace = await locate(session_id, _string(p, "cwd", method, required=False))
        try:
            # the snapshot's JSON straight from the stored JSON (no decoding and encoding)
            with collector_paused():  # rows and text of every message, no cycles
                return RawResult(await export_session_json(store, session_id))
        except StorageFault:
            raise  # the history cannot be read: -32015, not "unknown session"
        except StoreError as exc:  # deleted meanwhile
            raise SessionNotFound(f"unknown session {session_id!r}: {exc}") from exc

    async def restore(params: Any) -> dict[str, Any]:
        # checked copies and rows of every message, none in a cycle
        with collector_paused():
            return await _restore(params)

    async def _restore(params: Any) -> dict[str, Any]:
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
            snapshot = check_snapshot(p["snapshot"])
        except SnapshotError as exc:
            raise InvalidParams(f"invalid snapshot: {exc}") from exc
        mode = snapshot["session"]["mode"]
        if mode not in MODES:
            raise InvalidParams(
                f"invalid snapshot: session.mode must be one of {', '.join(MODES)}, not {mode!r}"
            )
        # a snapshot grants no more than this daemon grants a new session (its rules
        # likewise wait for importRules); the checked snapshot is a copy of the session
        snapshot["session"]["mode"] = no_looser_mode(mode, server.settings.mode)
        recorded = snapshot["session"]["workspace"]
        if cwd is not None:
            workspace = check_workspace(cwd)
        elif os.path.isabs(recorded) and os.path.isdir(recorded):
            workspace = Path(os.path.realpath(recorded))
        else:
            workspace = default_workspace()
        if keep_id and snapshot["session"]["id"] in registry.live:
            raise InvalidParams(
                f"invalid snapshot: session {snapshot['session']['id']!r} is live in this daemon; "
                f"restore it without keepId"
            )
        store = await registry.store_for(workspace)
        try:
            session_id = await import_session(store, snapshot, keep_id=keep_id, workspace=str(workspace))
        except SnapshotError as exc:
            raise InvalidParams(f"invalid snapshot: {exc}") from exc
        rules = []
        for rule in snapshot["rules"]:
            ok = import_rules and rule["kind"] in _RULE_KINDS and bool(rule["pattern"].strip())
            if ok:
                # through the gate, so its cached rules see the new ones at once
                gate = server.gate_for(workspace, store)
                await gate.add_rule(rule["kind"], rule["pattern"], rule["decision"])
            rules.append({
                "kind": rule["kind"],
                "pattern": rule["pattern"],
                "decision": rule["decision"],
                "imported": ok,
            })
        return {
            "sessionId": session_id,
            "cwd": str(workspace),
            "mode": snapshot["session"]["mode"],
            "rules": rules,
        }

    async def fork(
        source_id: str, cwd: str | None, upto_seq: int | None, target: Path | None
    ) -> dict[str, Any]:
        store, workspace = await locate(source_id, cwd)
        target = target or workspace
        into = None if target == workspace else await registry.store_for(target)
        try:
            new_id = await fork_session(store, source_id, upto_seq=upto_seq, into=into, workspace=str(target))
        except SnapshotError as exc:
            raise InvalidParams(f"invalid params: {exc}") from exc
        except StorageFault:
            raise
        except StoreError as exc:  # the source was deleted meanwhile
            raise SessionNotFound(f"unknown session {source_id!r}: {exc}") from exc
        session, _stored = await registry.revive(new_id, target)
        return {"sessionId": new_id, "modes": modes_state(session.mode)}

    async def acp_fork(params: Any) -> dict[str, Any]:
        method = "session/fork"
        p = _object(params)
        session_id = _string(p, "sessionId", method)
        cwd = _string(p, "cwd", method, required=False)
        assert session_id is not None
        return await fork(session_id, cwd, None, check_workspace(cwd) if cwd is not None else None)

    async def tether_fork(params: Any) -> dict[str, Any]:
        method = "_tether/session/fork"
        p = _object(params)
        session_id = _string(p, "sessionId", method)
        assert session_id is not None
        upto = _integer(p, "messageSeq", method, 0, None)
        return await fork(session_id, _string(p, "cwd", method, required=False), upto, None)

    async def search_(params: Any) -> dict[str, Any]:
        method = "_tether/session/search"
        p = _object(params)
        query = _string(p, "query", method)
        assert query is not None
        limit = _integer(p, "limit", method, 1, _MAX_LIMIT) or 20
        store = await registry.store_for(workspace_of(_string(p, "cwd", method, required=False)))
        hits = await search(store, query, limit=limit)
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

    async def latest(params: Any) -> dict[str, Any]:
        method = "_tether/session/latest"
        workspace = workspace_of(_string(_object(params), "cwd", method, required=False))
        record = await (await registry.store_for(workspace)).latest_session()
        if record is None:
            return {"sessionId": None}
        return {
            "sessionId": record.id,
            "title": record.title,
            "updatedAt": iso(record.updated_at),
            "cwd": record.workspace,
        }

    return [
        Route("_tether/session/dump", dump, None),
        Route("_tether/session/restore", restore, None),
        Route("session/fork", acp_fork, None),
        Route("_tether/session/fork", tether_fork, None),
        Route("_tether/session/search", search_, None),
        Route("_tether/session/latest", latest, None),
    ]
