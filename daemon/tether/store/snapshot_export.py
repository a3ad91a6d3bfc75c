"""Exporting a stored session as a snapshot (see ``snapshots``): as a JSON-able dict,
or straight as JSON text.

Owns: the SQL that reads one session for a snapshot, and the JSON text export that
splices the stored JSON (bodies, reports, approvals) in as it is stored.
Must not: validate or change what it reads, or write anything.
"""

from __future__ import annotations

import json
import time
from typing import Any

from tether.store.errors import StoreError
from tether.store.history import HistoryStore
from tether.store.records import decode_json, encode_json
from tether.store.snapshot_checkpoints import export_checkpoints
from tether.store.snapshot_checks import SNAPSHOT_VERSION
from tether_protocol._json import JsonObject

__all__ = ["export_session", "export_session_json"]


async def export_session(store: HistoryStore, session_id: str) -> JsonObject:
    """The snapshot of one stored session; ``StoreError`` if there is none.

    Read in dependency order (messages before the turns they name, reports filtered
    to those turns), so a turn committing meanwhile cannot make the snapshot invalid.
    """
    session = await _session_of(store, session_id)
    messages = [
        {
            "seq": seq,
            "turn_id": turn_id,
            "role": role,
            "status": status,
            "created_at": msg_created,
            "body": decode_json(body),
        }
        for seq, turn_id, role, status, msg_created, body in await store.query(
            "SELECT seq, turn_id, role, status, created_at, body FROM messages"
            " WHERE session_id = ? ORDER BY seq",
            (session_id,),
        )
    ]
    turns, pending = await _turns_of(store, session_id)
    checkpoints, rewound = await export_checkpoints(store, session_id)
    for message in messages:
        if message["seq"] in rewound:
            message["rewound"] = rewound[message["seq"]]
    known = {turn["id"] for turn in turns}
    reports = [
        {"turn_id": turn_id, "report": decode_json(report)}
        for turn_id, report in await store.query(
            "SELECT r.turn_id, r.report FROM run_reports AS r JOIN turns AS t ON t.id = r.turn_id"
            " WHERE r.session_id = ? ORDER BY t.seq",
            (session_id,),
        )
        if turn_id in known
    ]
    return {
        "tether_snapshot": SNAPSHOT_VERSION,
        "exported_at": time.time(),
        "session": session,
        "turns": turns,
        "messages": messages,
        "reports": reports,
        "rules": await _rules_of(store),
        "pending": pending,
        **({"checkpoints": checkpoints} if checkpoints is not None else {}),
    }


async def _turns_of(store: HistoryStore, session_id: str) -> tuple[list[JsonObject], JsonObject | None]:
    """The snapshot's ``turns`` and ``pending`` (the latest waiting turn's approvals)."""
    turns: list[JsonObject] = []
    pending: JsonObject | None = None
    for tid, seq, status, stop_reason, started_at, finished_at, error, waiting in await store.query(
        "SELECT id, seq, status, stop_reason, started_at, finished_at, error, pending FROM turns"
        " WHERE session_id = ? ORDER BY seq",
        (session_id,),
    ):
        turn: JsonObject = {
            "id": tid,
            "seq": seq,
            "status": status,
            "stop_reason": stop_reason,
            "started_at": started_at,
            "finished_at": finished_at,
            "error": error,
        }
        if waiting is not None:
            turn["pending"] = decode_json(waiting)
            if status == "running":  # the latest waiting turn wins, as in waiting_turn()
                pending = {"turn_id": tid, "approvals": turn["pending"]}
        turns.append(turn)
    return turns, pending


_str = json.encoder.encode_basestring


def _scalar(value: Any) -> str:
    """One column value as ``encode_json`` writes it."""
    kind = type(value)
    if kind is str:
        return _str(value)
    if kind is float and value - value == 0.0:  # finite
        return float.__repr__(value)
    if kind is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    return encode_json(value)


# A REAL as JSON text: 17 significant digits name the same double (Python reads it back
# exactly; the dict path's shortest spelling may be shorter), with ".0" on whole numbers
_REAL = "printf('%!.17g', {0})"
# one message of the snapshot, spelled by SQLite with its stored body spliced in (role and
# status are plain words: the schema's CHECKs)
_MESSAGE_TEXT = (
    """'{"seq":' || seq || ',"turn_id":' || json_quote(turn_id) || ',"role":"' || role"""
    """ || '","status":"' || status || '","created_at":' || """ + _REAL.format("created_at")
    + """ || ',"body":' || body || '}'"""
)
# true when the row's values are what `encode_json` of the dict would spell as above
_MESSAGE_PLAIN = (
    "json_valid(body) AND typeof(seq) = 'integer' AND typeof(created_at) = 'real' AND abs(created_at) < 1e308"
    " AND (turn_id IS NULL OR typeof(turn_id) = 'text')"
)
_TURN_TEXT = (
    """'{"id":' || json_quote(id) || ',"seq":' || seq || ',"status":"' || status || '","stop_reason":'"""
    """ || json_quote(stop_reason) || ',"started_at":' || """ + _REAL.format("started_at")
    + """ || ',"finished_at":' || iif(finished_at IS NULL, 'null', """ + _REAL.format("finished_at") + ")"
    """ || ',"error":' || json_quote(error) || ifnull(',"pending":' || pending, '') || '}'"""
)
_TURN_PLAIN = (
    "typeof(id) = 'text' AND typeof(seq) = 'integer' AND typeof(started_at) = 'real' AND abs(started_at) < 1e308"
    " AND (finished_at IS NULL OR typeof(finished_at) = 'real' AND abs(finished_at) < 1e308)"
    " AND (stop_reason IS NULL OR typeof(stop_reason) = 'text')"
    " AND (error IS NULL OR typeof(error) = 'text')"
    " AND (pending IS NULL OR json_valid(pending))"
)


async def export_session_json(store: HistoryStore, session_id: str) -> str:
    """``encode_json(await export_session(store, session_id))``, the same JSON value,
    built without decoding and encoding again the stored JSON (bodies, reports,
    approvals): SQLite writes each list as one text with the stored JSON spliced in as it
    is stored, as ``encode_json`` wrote it (no Python object per row). A stored value the
    text could not spell as the dict path does (a damaged row) falls back to ``export_session``.
    """
    session = await _session_of(store, session_id)
    if await _has_checkpoints(store, session_id):  # the blobs and rewinds: built as a dict
        return encode_json(await export_session(store, session_id))
    # (the subqueries' ORDER BY: aggregates over an ordered subquery see its order)
    ((messages, messages_plain),) = await store.query(
        f"SELECT ifnull(group_concat(text, ','), ''), ifnull(min(plain), 1) FROM (SELECT {_MESSAGE_TEXT} AS text,"
        f" {_MESSAGE_PLAIN} AS plain FROM messages WHERE session_id = ? ORDER BY seq)",
        (session_id,),
    )
    ((turns, turns_plain, last_turn),) = await store.query(
        f"SELECT ifnull(group_concat(text, ','), ''), ifnull(min(plain), 1), ifnull(max(seq), -1) FROM"
        f" (SELECT {_TURN_TEXT} AS text, {_TURN_PLAIN} AS plain, seq FROM turns WHERE session_id = ? ORDER BY seq)",
        (session_id,),
    )
    # the reports and approvals of those turns only: not of one begun after they were read
    report_rows = await store.query(
        "SELECT r.turn_id, r.report, json_valid(r.report) FROM run_reports AS r JOIN turns AS t ON t.id = r.turn_id"
        " WHERE r.session_id = ? AND t.session_id = r.session_id AND t.seq <= ? ORDER BY t.seq",
        (session_id, last_turn),
    )
    if not messages_plain or not turns_plain or not all(row[2] for row in report_rows):
        return encode_json(await export_session(store, session_id))
    # the latest waiting turn wins, as in export_session
    waiting = await store.query(
        "SELECT id, pending FROM turns WHERE session_id = ? AND seq <= ? AND status = 'running'"
        " AND pending IS NOT NULL ORDER BY seq DESC LIMIT 1",
        (session_id, last_turn),
    )
    pending = f'{{"turn_id":{_str(waiting[0][0])},"approvals":{waiting[0][1]}}}' if waiting else "null"
    reports = ",".join(
        f'{{"turn_id":{_scalar(turn_id)},"report":{report}}}' for turn_id, report, _valid in report_rows
    )
    return (
        f'{{"tether_snapshot":{SNAPSHOT_VERSION},"exported_at":{_scalar(time.time())},'
        f'"session":{encode_json(session)},"turns":[{turns}],"messages":[{messages}],'
        f'"reports":[{reports}],"rules":{encode_json(await _rules_of(store))},"pending":{pending}}}'
    )


async def _has_checkpoints(store: HistoryStore, session_id: str) -> bool:
    rows = await store.query(
        "SELECT EXISTS (SELECT 1 FROM file_changes WHERE session_id = ?)"
        " OR EXISTS (SELECT 1 FROM rewinds WHERE session_id = ?)", (session_id, session_id),
    )
    return bool(rows[0][0])


async def _session_of(store: HistoryStore, session_id: str) -> JsonObject:
    """The snapshot's ``session``; ``StoreError`` if there is none."""
    rows = await store.query(
        "SELECT id, workspace, title, mode, created_at, updated_at, metadata FROM sessions WHERE id = ?",
        (session_id,),
    )
    if not rows:
        raise StoreError(f"no session {session_id!r}")
    sid, workspace, title, mode, created_at, updated_at, metadata = rows[0]
    return {
        "id": sid,
        "workspace": workspace,
        "title": title,
        "mode": mode,
        "created_at": created_at,
        "updated_at": updated_at,
        "metadata": decode_json(metadata),
    }


async def _rules_of(store: HistoryStore) -> list[JsonObject]:
    """The snapshot's ``rules``: the workspace's approval rules."""
    return [
        {"kind": rule.tool_kind, "pattern": rule.pattern, "decision": rule.decision}
        for rule in await store.rules.list()
    ]
