"""Exporting a stored session as a snapshot (see ``snapshots``): a JSON-able dict, or JSON text.

Owns: the SQL that reads one session for a snapshot, its JSON text written a page at a time with
the stored JSON (bodies, reports, approvals) spliced in as stored, never whole, and a dump file
that appears only whole. Must not: validate or change what it reads, or write to the store.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tether.store.errors import StoreError
from tether.store.history import HistoryStore
from tether.store.records import decode_json, encode_json
from tether.store.snapshot_checkpoints import export_checkpoints, keep_until
from tether.store.snapshot_checks import SNAPSHOT_VERSION
from tether_protocol import JsonObject

__all__ = ["dump_to_file", "export_session", "export_session_json", "write_session_json"]


async def export_session(store: HistoryStore, session_id: str) -> JsonObject:
    """The snapshot of one stored session, as the dump writes it (``write_session_json``)
    and read back: one writer of the format. ``StoreError`` if there is none."""
    snapshot: JsonObject = decode_json(await export_session_json(store, session_id))
    return snapshot


async def _turns_of(
    store: HistoryStore, session_id: str, which: str = ""
) -> tuple[list[JsonObject], JsonObject | None]:
    """The snapshot's ``turns`` and ``pending`` (the latest waiting turn's approvals);
    ``which``: an SQL condition on them."""
    turns: list[JsonObject] = []
    pending: JsonObject | None = None
    for tid, seq, status, stop_reason, started_at, finished_at, error, waiting in await store.query(
        "SELECT id, seq, status, stop_reason, started_at, finished_at, error, pending FROM turns"
        f" WHERE session_id = ?{which} ORDER BY seq",
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
    + """ || ',"body":' || body || iif(rewound IS NULL, '', ',"rewound":' || rewound) || '}'"""
)
# true when the row's values are what `encode_json` of the dict would spell as above
_MESSAGE_PLAIN = (
    "json_valid(body) AND typeof(seq) = 'integer' AND typeof(created_at) = 'real' AND abs(created_at) < 1e308"
    " AND (turn_id IS NULL OR typeof(turn_id) = 'text') AND (rewound IS NULL OR typeof(rewound) = 'integer')"
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
    """The session's snapshot as one JSON text (``write_session_json``'s)."""
    parts: list[str] = []
    await write_session_json(store, session_id, parts.append)
    return "".join(parts)


async def write_session_json(store: HistoryStore, session_id: str, write: Callable[[str], object]) -> int:
    """The session's snapshot as JSON text, handed to ``write`` a page of records at a time
    (``encode_json``'s text of the dict, never whole); returns how many messages it holds. The stored JSON
    (bodies, reports, approvals) is spliced in as it is stored, as ``encode_json`` wrote
    it: SQLite writes each record's text (no Python object per row); a row whose values
    the text could not spell as the dict path does (a damaged row) is built as a dict.
    What it holds is what the session had when it began: messages and turns up to the
    last ones then (one statement), so a turn committing meanwhile does not tear it."""
    session = await _session_of(store, session_id)
    ((last_turn, last_seq, count),) = await store.query(
        "SELECT (SELECT ifnull(max(seq), -1) FROM turns WHERE session_id = ?1), ifnull(max(seq), -1), count(*)"
        " FROM messages WHERE session_id = ?1", (session_id,),
    )
    write(f'{{"tether_snapshot":{SNAPSHOT_VERSION},"exported_at":{_scalar(time.time())},'
          f'"session":{encode_json(session)},"turns":[')
    await _pages(store, write, _TURN_PAGE, (session_id, last_turn), _turn_text)
    write('],"messages":[')
    written = await _pages(store, write, _MESSAGE_PAGE, (session_id, last_seq), _message_text)
    write('],"reports":[')
    await _pages(store, write, _REPORT_PAGE, (session_id, last_turn), _report_text)
    waiting = await store.query(  # the latest waiting turn wins, as in waiting_turn()
        "SELECT id, pending FROM turns WHERE session_id = ? AND seq <= ? AND status = 'running'"
        " AND pending IS NOT NULL ORDER BY seq DESC LIMIT 1",
        (session_id, last_turn),
    )
    pending = f'{{"turn_id":{_str(waiting[0][0])},"approvals":{waiting[0][1]}}}' if waiting else "null"
    checkpoints = ""
    if await _has_checkpoints(store, session_id):
        cut: JsonObject = {"checkpoints": (await export_checkpoints(store, session_id))[0]}
        keep_until(cut, last_seq)  # the changes and rewinds of the messages it holds
        checkpoints = f',"checkpoints":{encode_json(cut["checkpoints"])}'
    write(f'],"rules":{encode_json(await _rules_of(store))},"pending":{pending}{checkpoints}}}')
    if written != count:
        raise StoreError(f"session {session_id!r} lost messages while it was dumped (deleted meanwhile?)")
    return written


async def dump_to_file(store: HistoryStore, session_id: str, path: Path, *, replace: bool) -> tuple[int, int]:
    """Write the session's snapshot to ``path`` as ``write_session_json`` makes it, a page at
    a time; (messages, bytes). It is written beside ``path`` (readable by its owner only:
    it holds the whole conversation) and appears there only whole: a dump that fails
    leaves nothing. Without ``replace`` an existing ``path`` is refused (FileExistsError)."""
    fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as out:
            messages = await write_session_json(store, session_id, lambda text: out.write(text.encode("utf-8")))
            size = out.tell()
            out.flush()
            os.fsync(out.fileno())
        if replace:
            os.replace(partial, path)
        else:
            os.link(partial, path)  # never over a file that appeared meanwhile
    finally:
        if os.path.lexists(partial):  # (linked, or the dump failed)
            os.unlink(partial)
    return messages, size


_PAGE = 1000
# (seq, the record's text or NULL when it must be built as a dict) a page at a time after a seq, up to the last
_TURN_PAGE = (
    f"SELECT seq, iif({_TURN_PLAIN}, {_TURN_TEXT}, NULL) FROM turns WHERE session_id = ? AND seq > ?"
    f" AND seq <= ? ORDER BY seq LIMIT {_PAGE}"
)
_MESSAGE_PAGE = (
    f"SELECT seq, iif({_MESSAGE_PLAIN}, {_MESSAGE_TEXT}, NULL) FROM messages WHERE session_id = ? AND seq > ?"
    f" AND seq <= ? ORDER BY seq LIMIT {_PAGE}"
)
_REPORT_PAGE = (
    """SELECT t.seq, iif(json_valid(r.report), '{"turn_id":' || json_quote(r.turn_id) || ',"report":' || r.report"""
    """ || '}', NULL) FROM run_reports AS r JOIN turns AS t ON t.id = r.turn_id WHERE r.session_id = ?1"""
    f" AND t.session_id = ?1 AND t.seq > ?2 AND t.seq <= ?3 ORDER BY t.seq LIMIT {_PAGE}"
)
Built = Callable[[HistoryStore, str, int], Awaitable[str]]


async def _pages(store: HistoryStore, write: Callable[[str], object], sql: str, cut: tuple[str, int],
                 built: Built) -> int:
    """Write the records of ``sql`` page by page, commas between them; how many."""
    session_id, last = cut
    after, count = -1, 0
    while rows := await store.query(sql, (session_id, after, last)):
        texts = [text if text is not None else await built(store, session_id, seq) for seq, text in rows]
        write(("," if count else "") + ",".join(texts))
        after, count = rows[-1][0], count + len(rows)
    return count


async def _message_text(store: HistoryStore, session_id: str, seq: int) -> str:
    ((turn_id, role, status, created_at, body, rewound),) = await store.query(
        "SELECT turn_id, role, status, created_at, body, rewound FROM messages WHERE session_id = ? AND seq = ?",
        (session_id, seq),
    )
    message = {"seq": seq, "turn_id": turn_id, "role": role, "status": status, "created_at": created_at,
               "body": decode_json(body)}
    return encode_json(message if rewound is None else {**message, "rewound": rewound})


async def _turn_text(store: HistoryStore, session_id: str, seq: int) -> str:
    turns, _pending = await _turns_of(store, session_id, f" AND seq = {int(seq)}")
    return encode_json(turns[0])


async def _report_text(store: HistoryStore, session_id: str, seq: int) -> str:
    ((turn_id, report),) = await store.query(
        "SELECT r.turn_id, r.report FROM run_reports AS r JOIN turns AS t ON t.id = r.turn_id"
        " WHERE t.session_id = ? AND t.seq = ?", (session_id, seq),
    )
    return encode_json({"turn_id": turn_id, "report": decode_json(report)})


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
