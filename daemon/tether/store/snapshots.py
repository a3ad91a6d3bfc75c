"""Session snapshots: export a stored session as one JSON-able dict, import it, fork it.

A snapshot (format version ``SNAPSHOT_VERSION``) holds a session with its turns,
messages, run reports, the workspace's stored approval rules and the approvals a
waiting turn asks for. Keys are snake_case like the store's records; timestamps are
float seconds since the epoch; message bodies are the stored JSON of the typed
conversation (``tether_protocol.conversation``), checked by its one converter and
imported as they are (keys it does not name are kept); reports are kept as data.

Owns: the snapshot format and its validation, upgrading older formats through
``MIGRATIONS``, the SQL that exports and imports one session, and forking (an export
cut at a message, imported as a new session).
Must not: speak the wire protocol, pick workspaces or stores (callers hand them in),
or change a workspace's approval rules unless asked (``import_rules=True``).
"""

from __future__ import annotations

import copy
import json
import sqlite3
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeGuard, cast

import aiosqlite
from tether_protocol.conversation import (
    ConversationError,
    check_message_json,
    tool_call_from_json,
)

from tether.store.errors import StoreError
from tether.store.history import HistoryStore
from tether.store.records import (
    MESSAGE_ROLES,
    MESSAGE_STATUSES,
    TURN_STATUSES,
    decode_json,
    encode_json,
    indexed_text,
    new_turn_ids,
)

__all__ = [
    "MIGRATIONS",
    "SNAPSHOT_VERSION",
    "SnapshotError",
    "check_snapshot",
    "export_session",
    "export_session_json",
    "fork_session",
    "import_session",
    "new_session_id",
]

SNAPSHOT_VERSION = 1

# version -> a function taking a snapshot of that version and returning one of the
# next version (``tether_snapshot`` set to it). Empty while there is only version 1.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}

RULE_DECISIONS = ("allow", "deny")

# A seq is a JSON-safe integer (JavaScript reads exact integers up to 2**53 - 1): far from
# SQLite's 64-bit limit, so the turns and messages that follow can still be numbered.
MAX_SEQ = 2**53 - 1
# Timestamps are seconds since the epoch: 1e11 is the year 5138 (and a float, unlike an
# integer over 64 bits, that SQLite stores).
MAX_TIME = 1e11


class SnapshotError(StoreError):
    """A snapshot that cannot be imported (or a fork point that does not exist); says why."""


def new_session_id() -> str:
    return "sess_" + uuid.uuid4().hex


# -- export -----------------------------------------------------------------------


async def export_session(store: HistoryStore, session_id: str) -> dict[str, Any]:
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
    turns: list[dict[str, Any]] = []
    pending: dict[str, Any] | None = None
    for tid, seq, status, stop_reason, started_at, finished_at, error, waiting in await store.query(
        "SELECT id, seq, status, stop_reason, started_at, finished_at, error, pending FROM turns"
        " WHERE session_id = ? ORDER BY seq",
        (session_id,),
    ):
        turn: dict[str, Any] = {
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
    }


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


async def export_session_json(store: HistoryStore, session_id: str) -> str:
    """``encode_json(await export_session(store, session_id))``, the same JSON value,
    built without decoding and encoding again the stored JSON (bodies, reports,
    approvals): it is spliced in as it is stored, as ``encode_json`` wrote it. A stored text
    SQLite does not take for JSON (a damaged row) falls back to ``export_session``.
    """
    session = await _session_of(store, session_id)
    # `plain`: the row's values are what `encode_json` of the dict would spell as below
    # (role and status are plain words: the schema's CHECKs)
    rows = await store.query(
        "SELECT seq, turn_id, role, status, created_at, body, json_valid(body)"
        " AND typeof(seq) = 'integer' AND typeof(created_at) = 'real' AND abs(created_at) < 1e308"
        " FROM messages WHERE session_id = ? ORDER BY seq",
        (session_id,),
    )
    if not all(row[6] for row in rows):
        return encode_json(await export_session(store, session_id))
    turn_ids: dict[str | None, str] = {}
    for row in rows:
        if row[1] not in turn_ids:
            turn_ids[row[1]] = _scalar(row[1])
    messages = ",".join([
        f'{{"seq":{seq},"turn_id":{turn_ids[turn_id]},"role":"{role}","status":"{status}",'
        f'"created_at":{msg_created!r},"body":{body}}}'
        for seq, turn_id, role, status, msg_created, body, _plain in rows
    ])
    turn_rows = await store.query(
        "SELECT id, seq, status, stop_reason, started_at, finished_at, error, pending,"
        " typeof(seq) = 'integer' AND typeof(started_at) = 'real' AND abs(started_at) < 1e308"
        " AND (finished_at IS NULL OR typeof(finished_at) = 'real' AND abs(finished_at) < 1e308)"
        " AND (stop_reason IS NULL OR typeof(stop_reason) = 'text')"
        " AND (error IS NULL OR typeof(error) = 'text')"
        " AND (pending IS NULL OR json_valid(pending))"
        " FROM turns WHERE session_id = ? ORDER BY seq",
        (session_id,),
    )
    report_rows = await store.query(
        "SELECT r.turn_id, r.report, json_valid(r.report) FROM run_reports AS r"
        " JOIN turns AS t ON t.id = r.turn_id WHERE r.session_id = ? ORDER BY t.seq",
        (session_id,),
    )
    if not all(row[8] for row in turn_rows) or not all(row[2] for row in report_rows):
        return encode_json(await export_session(store, session_id))
    turns: list[str] = []
    pending = "null"
    for tid, seq, status, stop_reason, started_at, finished_at, error, waiting, _plain in turn_rows:
        turn = (
            f'{{"id":{_str(tid)},"seq":{seq},"status":"{status}",'
            f'"stop_reason":{"null" if stop_reason is None else _str(stop_reason)},'
            f'"started_at":{started_at!r},"finished_at":{"null" if finished_at is None else repr(finished_at)},'
            f'"error":{"null" if error is None else _str(error)}'
        )
        if waiting is None:
            turns.append(turn + "}")
        else:
            turns.append(f'{turn},"pending":{waiting}}}')
            if status == "running":  # the latest waiting turn wins, as in export_session
                pending = f'{{"turn_id":{_str(tid)},"approvals":{waiting}}}'
    known = {row[0] for row in turn_rows}
    reports = ",".join(
        f'{{"turn_id":{_scalar(turn_id)},"report":{report}}}'
        for turn_id, report, _valid in report_rows
        if turn_id in known
    )
    return (
        f'{{"tether_snapshot":{SNAPSHOT_VERSION},"exported_at":{_scalar(time.time())},'
        f'"session":{encode_json(session)},"turns":[{",".join(turns)}],"messages":[{messages}],'
        f'"reports":[{reports}],"rules":{encode_json(await _rules_of(store))},"pending":{pending}}}'
    )


async def _session_of(store: HistoryStore, session_id: str) -> dict[str, Any]:
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


async def _rules_of(store: HistoryStore) -> list[dict[str, Any]]:
    """The snapshot's ``rules``: the workspace's approval rules."""
    return [
        {"kind": rule.tool_kind, "pattern": rule.pattern, "decision": rule.decision}
        for rule in await store.rules.list()
    ]


# -- validation and upgrade -------------------------------------------------------


class CheckedSnapshot(dict[str, Any]):
    """What ``check_snapshot`` returns: ``import_session`` stores it without checking again.
    Change one and it is no longer checked (pass it through ``check_snapshot`` again)."""


def check_snapshot(snapshot: Any) -> CheckedSnapshot:
    """A valid snapshot of the current version (checked; upgraded on a copy if older).

    The caller's object is never changed: migrations work on a deep copy, and a current
    snapshot is only read (copying 10,000 messages cost ~0.6 s, more than the import).
    Raises ``SnapshotError`` naming the first field that is wrong.
    """
    if isinstance(snapshot, CheckedSnapshot):
        return snapshot
    if not isinstance(snapshot, dict):
        raise SnapshotError(f"a snapshot must be a JSON object, not {_type(snapshot)}")
    if snapshot.get("tether_snapshot") != SNAPSHOT_VERSION:
        snapshot = copy.deepcopy(snapshot)
    snapshot = _upgrade(dict(snapshot))
    # the checks fill in defaults: they work on shallow copies of each record
    if isinstance(snapshot.get("session"), dict):
        snapshot["session"] = dict(snapshot["session"])
    for key in ("turns", "messages", "reports", "rules"):
        if isinstance(snapshot.get(key), list):
            snapshot[key] = [dict(item) if isinstance(item, dict) else item for item in snapshot[key]]
    _check_session(snapshot.get("session"))
    turn_ids = _check_turns(_list(snapshot, "turns"))
    _check_messages(_list(snapshot, "messages"), turn_ids)
    _check_reports(_list(snapshot, "reports"), turn_ids)
    _check_rules(_list(snapshot, "rules", required=False))
    return CheckedSnapshot(snapshot)


def _supported() -> str:
    return ", ".join(str(v) for v in sorted({*MIGRATIONS, SNAPSHOT_VERSION}))


def _upgrade(snapshot: dict[str, Any]) -> dict[str, Any]:
    version = snapshot.get("tether_snapshot")
    if "tether_snapshot" not in snapshot:
        raise SnapshotError(
            f'not a tether snapshot: the "tether_snapshot" version field is missing '
            f"(supported versions: {_supported()})"
        )
    if not _is_int(version):
        raise SnapshotError(f'"tether_snapshot" must be an integer version, not {version!r}')
    while version != SNAPSHOT_VERSION:
        migrate = MIGRATIONS.get(version)
        if migrate is None:
            newer = " (written by a newer tether; upgrade tether)" if version > SNAPSHOT_VERSION else ""
            raise SnapshotError(
                f"snapshot version {version} is not supported{newer}; "
                f"this tether reads versions {_supported()}"
            )
        snapshot = migrate(snapshot)
        upgraded = snapshot.get("tether_snapshot") if isinstance(snapshot, dict) else None
        if not _is_int(upgraded) or upgraded <= version:
            raise SnapshotError(f"the migration of snapshot version {version} did not upgrade it")
        version = upgraded
    return snapshot


def _check_session(session: Any) -> None:
    if not isinstance(session, dict):
        raise SnapshotError(f'"session" must be an object, not {_type(session)}')
    _field(session, "session", "id", str)
    if not session["id"]:
        raise SnapshotError("session.id must not be empty")
    _field(session, "session", "workspace", str)
    _field(session, "session", "title", str, nullable=True, default=None)
    _field(session, "session", "mode", str)
    _number(session, "session", "created_at")
    _number(session, "session", "updated_at")
    session.setdefault("metadata", {})
    _field(session, "session", "metadata", dict)


def _check_turns(turns: list[Any]) -> set[str]:
    ids: set[str] = set()
    seqs: set[int] = set()
    for i, turn in enumerate(turns):
        if not _plain_turn(turn, ids, seqs):  # else a field is missing or wrong: say which
            where = f"turns[{i}]"
            if not isinstance(turn, dict):
                raise SnapshotError(f"{where} must be an object, not {_type(turn)}")
            _field(turn, where, "id", str)
            _field(turn, where, "seq", int)
            _choice(turn, where, "status", TURN_STATUSES)
            _field(turn, where, "stop_reason", str, nullable=True, default=None)
            _number(turn, where, "started_at")
            _number(turn, where, "finished_at", nullable=True, default=None)
            _field(turn, where, "error", str, nullable=True, default=None)
            _field(turn, where, "pending", dict, nullable=True, default=None)
            if not 0 <= turn["seq"] <= MAX_SEQ:
                raise SnapshotError(f"{where}.seq must be between 0 and {MAX_SEQ}, not {turn['seq']}")
            if turn["pending"] is not None and (problem := _pending_problem(turn["pending"])):
                raise SnapshotError(f"{where}.pending{problem}")
            if turn["id"] in ids:
                raise SnapshotError(f"{where}.id {turn['id']!r} appears twice")
            if turn["seq"] in seqs:
                raise SnapshotError(f"{where}.seq {turn['seq']} appears twice")
        ids.add(turn["id"])
        seqs.add(turn["seq"])
    return ids


def _plain_turn(turn: Any, ids: set[str], seqs: set[int]) -> bool:
    """A turn the full checks would pass as it is, but for a missing ``pending`` (set
    here). Most are: they take this one expression instead of a dozen calls each."""
    if not (
        type(turn) is dict
        and type(turn_id := turn.get("id")) is str
        and turn_id not in ids
        and type(seq := turn.get("seq")) is int
        and 0 <= seq <= MAX_SEQ
        and seq not in seqs
        and type(status := turn.get("status")) is str
        and status in TURN_STATUSES
        and (type(turn.get("stop_reason", 0)) is str or turn.get("stop_reason", 0) is None)
        and type(started := turn.get("started_at")) in _NUMBERS
        and 0 <= cast(float, started) < MAX_TIME
        and (
            type(finished := turn.get("finished_at", 0)) in _NUMBERS and 0 <= cast(float, finished) < MAX_TIME
            or turn.get("finished_at", 0) is None
        )
        and (type(turn.get("error", 0)) is str or turn.get("error", 0) is None)
    ):
        return False
    pending = turn.setdefault("pending", None)
    return pending is None or type(pending) is dict and _pending_problem(pending) is None


_NUMBERS = (int, float)  # exactly: a bool is not a timestamp


def _check_messages(messages: list[Any], turn_ids: set[str]) -> None:
    last = -1
    for i, message in enumerate(messages):
        if not _plain_message(message, last, turn_ids):
            _check_message_fields(message, f"messages[{i}]", last, turn_ids)
        last = message["seq"]
        try:  # the body: what replay, search and the model rely on, by the one converter
            check_message_json(message["body"], message["role"])
        except ConversationError as exc:
            raise SnapshotError(f"messages[{i}].body{exc}") from None


def _check_message_fields(message: Any, where: str, last: int, turn_ids: set[str]) -> None:
    """Say which field of a message record is missing or wrong (filling in defaults)."""
    if not isinstance(message, dict):
        raise SnapshotError(f"{where} must be an object, not {_type(message)}")
    _field(message, where, "seq", int)
    if not 0 <= message["seq"] <= MAX_SEQ:
        raise SnapshotError(f"{where}.seq must be between 0 and {MAX_SEQ}, not {message['seq']}")
    if message["seq"] <= last:
        raise SnapshotError(f"{where}.seq must be greater than {last} (messages in seq order)")
    _field(message, where, "turn_id", str, nullable=True, default=None)
    if message["turn_id"] is not None and message["turn_id"] not in turn_ids:
        raise SnapshotError(f"{where}.turn_id {message['turn_id']!r} is not one of the turns")
    _choice(message, where, "role", MESSAGE_ROLES)
    message.setdefault("status", "complete")
    _choice(message, where, "status", MESSAGE_STATUSES)
    _number(message, where, "created_at")
    _field(message, where, "body", dict)


def _plain_message(message: Any, last: int, turn_ids: set[str]) -> bool:
    """A message record whose fields but the body the full checks would pass as they are."""
    return (
        type(message) is dict
        and type(seq := message.get("seq")) is int
        and last < seq <= MAX_SEQ
        and ((turn_id := message.get("turn_id", 0)) is None or (type(turn_id) is str and turn_id in turn_ids))
        and type(role := message.get("role")) is str
        and role in MESSAGE_ROLES
        and type(status := message.get("status")) is str
        and status in MESSAGE_STATUSES
        and type(created := message.get("created_at")) in _NUMBERS
        and 0 <= cast(float, created) < MAX_TIME
        and type(message.get("body")) is dict
    )


def _pending_problem(pending: dict[str, Any]) -> str | None:
    """What is wrong with a waiting turn's ``{step, calls}``, as the rest of the path and
    why (``.calls[0].id is missing``); None if it can be resumed."""
    step = pending.get("step", 1)
    if type(step) is not int or not 1 <= step <= MAX_SEQ:
        return f".step must be an integer from 1, not {step!r}"
    calls = pending.get("calls")
    if type(calls) is not list:
        return f".calls must be a list of the calls still to run, not {_type(calls)}"
    for i, call in enumerate(calls):
        try:
            tool_call_from_json(call, f".calls[{i}]")
        except ConversationError as exc:
            return str(exc)
    return None


def _check_reports(reports: list[Any], turn_ids: set[str]) -> None:
    seen: set[str] = set()
    for i, entry in enumerate(reports):
        where = f"reports[{i}]"
        if not isinstance(entry, dict):
            raise SnapshotError(f"{where} must be an object, not {_type(entry)}")
        _field(entry, where, "turn_id", str)
        _field(entry, where, "report", dict)
        if entry["turn_id"] not in turn_ids:
            raise SnapshotError(f"{where}.turn_id {entry['turn_id']!r} is not one of the turns")
        if entry["turn_id"] in seen:
            raise SnapshotError(f"{where}: turn {entry['turn_id']!r} has two reports")
        seen.add(entry["turn_id"])


def _check_rules(rules: list[Any]) -> None:
    for i, rule in enumerate(rules):
        where = f"rules[{i}]"
        if not isinstance(rule, dict):
            raise SnapshotError(f"{where} must be an object, not {_type(rule)}")
        _field(rule, where, "kind", str)
        _field(rule, where, "pattern", str)
        _choice(rule, where, "decision", frozenset(RULE_DECISIONS))


_MISSING = object()


def _list(snapshot: dict[str, Any], key: str, *, required: bool = True) -> list[Any]:
    if key not in snapshot and not required:
        snapshot[key] = []
    value = snapshot.get(key, _MISSING)
    if not isinstance(value, list):
        shown = "missing" if value is _MISSING else f"{_type(value)}"
        raise SnapshotError(f'"{key}" must be a list, not {shown}')
    return value


def _present(obj: dict[str, Any], where: str, key: str, nullable: bool, default: Any) -> Any:
    """The field's value, its default filled in when it is absent; a missing field
    without a default is an error (None is returned as it is, for the caller)."""
    if key not in obj and default is not _MISSING:
        obj[key] = default
    value = obj.get(key, _MISSING)
    if value is _MISSING:
        raise SnapshotError(f"{where}.{key} is missing")
    return value


def _field(
    obj: dict[str, Any],
    where: str,
    key: str,
    kind: type,
    *,
    nullable: bool = False,
    default: Any = _MISSING,
) -> None:
    value = _present(obj, where, key, nullable, default)
    if value is None and nullable:
        return
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        expected = {str: "a string", int: "an integer", dict: "an object"}.get(kind, kind.__name__)
        raise SnapshotError(
            f"{where}.{key} must be {expected}{' or null' if nullable else ''}, not {_type(value)}"
        )


def _number(
    obj: dict[str, Any], where: str, key: str, *, nullable: bool = False, default: Any = _MISSING
) -> None:
    value = _present(obj, where, key, nullable, default)
    if value is None and nullable:
        return
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise SnapshotError(f"{where}.{key} must be a number (seconds since the epoch), not {_type(value)}")
    if not 0 <= value < MAX_TIME:  # NaN and the infinities fail this too
        raise SnapshotError(
            f"{where}.{key} must be seconds since the epoch, from 0 to below {MAX_TIME:.0e}, not {value!r}"
        )


def _choice(obj: dict[str, Any], where: str, key: str, allowed: frozenset[str]) -> None:
    value = obj.get(key, _MISSING)
    if not isinstance(value, str) or value not in allowed:  # a list would not hash
        shown = "missing" if value is _MISSING else repr(value)
        raise SnapshotError(f"{where}.{key} must be one of {sorted(allowed)}, not {shown}")


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _type(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


# -- import -----------------------------------------------------------------------


async def import_session(
    store: HistoryStore,
    snapshot: Any,
    *,
    keep_id: bool = False,
    new_id: str | None = None,
    workspace: str | None = None,
    import_rules: bool = False,
) -> str:
    """Store the snapshot's session in ``store``; returns its id.

    The id is the snapshot's with ``keep_id`` (``SnapshotError`` if taken), else
    ``new_id``, else a fresh ``sess_<hex>``; a session with a new id gets new turn ids
    too (messages and reports follow, as do the ``sessionId``/``turnId`` fields of the
    reports). ``workspace`` overrides the recorded workspace. Messages, turns and
    their timestamps are kept; the session keeps ``created_at`` and is ``updated_at``
    now. Under the snapshot's id, turns keep their status and pending approvals (a turn
    waiting for approval still waits). A copy under a new id runs nothing of the
    original's: a turn still running or waiting for approval there is ``interrupted`` in
    the copy, without its pending approvals, as in a fork. The snapshot's approval rules
    are added to the workspace only with ``import_rules``.
    """
    checked = check_snapshot(snapshot)
    source = checked["session"]
    if keep_id and new_id is not None and new_id != source["id"]:
        raise ValueError("keep_id and new_id contradict each other")
    session_id = source["id"] if keep_id else (new_id or new_session_id())
    fresh = session_id != source["id"]
    turns = _stop_running(checked["turns"], checked["messages"]) if fresh else checked["turns"]
    fresh_ids = new_turn_ids(len(turns)) if fresh else [t["id"] for t in turns]
    turn_map = {t["id"]: new for t, new in zip(turns, fresh_ids)}
    now = time.time()

    session_row = (
        session_id,
        workspace if workspace is not None else source["workspace"],
        source["title"],
        source["mode"],
        source["created_at"],
        now,
        encode_json(source["metadata"]),
    )
    turn_rows = [
        (
            turn_map[t["id"]], t["seq"], t["status"], t["stop_reason"], t["started_at"],
            t["finished_at"], t["error"], None if t["pending"] is None else encode_json(t["pending"]),
        )
        for t in turns
    ]
    message_rows = [
        (
            None if m["turn_id"] is None else turn_map[m["turn_id"]], m["seq"], m["role"],
            encode_json(m["body"]), m["status"], m["created_at"], indexed_text(m["role"], m["body"]),
        )
        for m in checked["messages"]
    ]
    finished = {t["id"]: t["finished_at"] for t in turns}
    report_rows = [
        (
            turn_map[r["turn_id"]], session_id,
            encode_json(_remap_report(r["report"], source["id"], session_id, r["turn_id"], turn_map)),
            finished[r["turn_id"]] or now,
        )
        for r in checked["reports"]
    ]

    async def work(conn: aiosqlite.Connection) -> None:
        try:
            await conn.execute(
                "INSERT INTO sessions (id, workspace, title, mode, created_at, updated_at, metadata)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                session_row,
            )
        except sqlite3.IntegrityError as exc:
            raise SnapshotError(
                f"session {session_id!r} already exists in this workspace"
                + ("; restore it without keeping its id" if keep_id else "")
            ) from exc
        # Rows go to TEMP tables first, then over in one INSERT ... SELECT each: executed
        # row by row, the schema's CHECK (... IN (...)) constraints cost more than the insert
        # itself (SQLite builds their lists again for every execution).
        await conn.execute(
            "CREATE TEMP TABLE import_turns (id, seq, status, stop_reason, started_at, finished_at, error, pending)"
        )
        await conn.executemany("INSERT INTO import_turns VALUES (?, ?, ?, ?, ?, ?, ?, ?)", turn_rows)
        try:
            await conn.execute(
                "INSERT INTO turns (id, session_id, seq, status, stop_reason, started_at, finished_at, error,"
                " pending) SELECT id, ?, seq, status, stop_reason, started_at, finished_at, error, pending"
                " FROM import_turns ORDER BY rowid",
                (session_id,),
            )
        except sqlite3.IntegrityError as exc:
            raise SnapshotError(f"a turn of session {session_id!r} already exists: {exc}") from exc
        await conn.execute(
            "CREATE TEMP TABLE import_messages (turn_id, seq, role, body, status, created_at, text)"
        )
        await conn.executemany("INSERT INTO import_messages VALUES (?, ?, ?, ?, ?, ?, ?)", message_rows)
        await conn.execute(
            "INSERT INTO messages (session_id, turn_id, seq, role, body, status, created_at)"
            " SELECT ?, turn_id, seq, role, body, status, created_at FROM import_messages ORDER BY rowid",
            (session_id,),
        )
        # the search index (schema v5: written by the store), by the ids the messages got:
        # one INSERT in our write transaction numbers them on from the table's largest id
        # (AUTOINCREMENT), in import order, which is checked; else they are looked up by seq
        # (30-60 ms more for 10,000 messages)
        ((low, high, count),) = await conn.execute_fetchall(
            "SELECT min(id), max(id), count(*) FROM messages WHERE session_id = ?", (session_id,)
        )
        if count == len(message_rows) and count and high - low + 1 == count:
            await conn.execute(
                "INSERT INTO messages_fts (rowid, text) SELECT ? + rowid, text FROM import_messages"
                " WHERE text IS NOT NULL ORDER BY rowid",
                (low - 1,),
            )
        else:
            await conn.execute(
                "INSERT INTO messages_fts (rowid, text) SELECT m.id, i.text FROM import_messages AS i"
                " JOIN messages AS m ON m.session_id = ? AND m.seq = i.seq WHERE i.text IS NOT NULL"
                " ORDER BY m.id",
                (session_id,),
            )
        await conn.execute("DROP TABLE temp.import_turns")
        await conn.execute("DROP TABLE temp.import_messages")
        await conn.executemany(
            "INSERT INTO run_reports (turn_id, session_id, report, created_at) VALUES (?, ?, ?, ?)",
            report_rows,
        )

    await store.transaction(work)
    if import_rules:
        for rule in checked["rules"]:
            await store.rules.add(rule["kind"], rule["pattern"], rule["decision"])
    return session_id


def _stop_running(turns: list[dict[str, Any]], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The turns of a copy: one still running (or waiting for approval) is ``interrupted``,
    finished when its last message was, without pending approvals."""
    running = {t["id"] for t in turns if t["status"] == "running"}
    if not running:
        return turns
    last: dict[str, Any] = {}
    for m in messages:
        if m["turn_id"] in running:
            last[m["turn_id"]] = max(last.get(m["turn_id"], m["created_at"]), m["created_at"])
    return [
        {**t, "status": "interrupted", "finished_at": last.get(t["id"], t["started_at"]), "pending": None}
        if t["id"] in running else t
        for t in turns
    ]


def _remap_report(
    report: dict[str, Any], old_session: str, new_session: str, old_turn: str, turn_map: dict[str, str]
) -> dict[str, Any]:
    if old_session == new_session:
        return report
    report = dict(report)
    if report.get("sessionId") == old_session:
        report["sessionId"] = new_session
    if report.get("turnId") == old_turn:
        report["turnId"] = turn_map[old_turn]
    return report


# -- fork -------------------------------------------------------------------------


async def fork_session(
    store: HistoryStore,
    session_id: str,
    *,
    upto_seq: int | None = None,
    new_id: str | None = None,
    into: HistoryStore | None = None,
    workspace: str | None = None,
) -> str:
    """A new session with the messages up to and including ``upto_seq`` (default: all).

    Titled "<title> (fork)", with the turns and reports of the copied messages. A turn
    still running (or waiting for approval) in the source is ``interrupted`` in the
    fork, without its pending approvals: nothing runs in the fork until it is prompted.
    ``into``/``workspace``: store the fork in another workspace's store.
    """
    snapshot = await export_session(store, session_id)
    messages = snapshot["messages"]
    if upto_seq is not None:
        if not any(m["seq"] == upto_seq for m in messages):
            last = f"0..{messages[-1]['seq']}" if messages else "none"
            raise SnapshotError(
                f"session {session_id!r} has no message {upto_seq} to fork at (its messages: {last})"
            )
        messages = [m for m in messages if m["seq"] <= upto_seq]
    kept = {m["turn_id"] for m in messages}
    turns = [t for t in snapshot["turns"] if t["id"] in kept]
    for turn in turns:
        turn.pop("pending", None)  # a running turn is interrupted by the import (a new id)
    session = snapshot["session"]
    now = time.time()
    session["created_at"] = now
    session["title"] = f"{session['title']} (fork)" if session["title"] else None
    snapshot.update(
        messages=messages,
        turns=turns,
        reports=[r for r in snapshot["reports"] if r["turn_id"] in kept],
        rules=[],
        pending=None,
    )
    return await import_session(
        into or store, snapshot, new_id=new_id or new_session_id(), workspace=workspace
    )
