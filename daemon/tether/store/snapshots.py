"""Session snapshots: export a stored session as one JSON-able dict, import it, fork it.

A snapshot (format version ``SNAPSHOT_VERSION``) holds a session with its turns,
messages, run reports, the workspace's stored approval rules and the approvals a
waiting turn asks for. Keys are snake_case like the store's records; timestamps are
float seconds since the epoch; message bodies are the stored JSON of the typed
conversation (``tether_protocol.conversation``), checked by its one converter and
imported as they are (keys it does not name are kept); reports are kept as data.

Owns: the snapshot API (``store.snapshots``), upgrading older formats through
``MIGRATIONS`` before checking (the field checks are ``snapshot_checks``, the export
``snapshot_export``), the SQL that imports one session, and forking (an export cut at a
message, imported as a new session).
Must not: speak the wire protocol, pick workspaces or stores (callers hand them in),
or change a workspace's approval rules unless asked (``import_rules=True``).
"""

from __future__ import annotations

import copy
import sqlite3
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiosqlite

from tether.store.history import HistoryStore
from tether.store.records import encode_json, indexed_text, new_turn_ids
from tether.store.snapshot_checkpoints import check_checkpoints, import_checkpoints, keep_until
from tether.store.snapshot_checks import (
    SNAPSHOT_VERSION,
    SnapshotError,
    check_messages,
    check_reports,
    check_rules,
    check_session,
    check_turns,
    is_int,
    listed,
)
from tether.store.snapshot_export import export_session, export_session_json
from tether_protocol._json import JsonObject, type_name

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

# version -> a function taking a snapshot of that version and returning one of the
# next version (``tether_snapshot`` set to it). Empty while there is only version 1.
MIGRATIONS: dict[int, Callable[[JsonObject], JsonObject]] = {}


def new_session_id() -> str:
    return "sess_" + uuid.uuid4().hex


# -- validation and upgrade -------------------------------------------------------


class CheckedSnapshot(JsonObject):
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
        raise SnapshotError(f"a snapshot must be a JSON object, not {type_name(snapshot)}")
    if snapshot.get("tether_snapshot") != SNAPSHOT_VERSION:
        snapshot = copy.deepcopy(snapshot)
    snapshot = _upgrade(dict(snapshot))
    # the checks fill in defaults: they work on shallow copies of each record
    if isinstance(snapshot.get("session"), dict):
        snapshot["session"] = dict(snapshot["session"])
    for key in ("turns", "messages", "reports", "rules"):
        if isinstance(snapshot.get(key), list):
            snapshot[key] = [dict(item) if isinstance(item, dict) else item for item in snapshot[key]]
    check_session(snapshot.get("session"))
    turn_ids = check_turns(listed(snapshot, "turns"))
    check_messages(listed(snapshot, "messages"), turn_ids)
    check_reports(listed(snapshot, "reports"), turn_ids)
    check_rules(listed(snapshot, "rules", required=False))
    check_checkpoints(snapshot)
    return CheckedSnapshot(snapshot)


def _supported() -> str:
    return ", ".join(str(v) for v in sorted({*MIGRATIONS, SNAPSHOT_VERSION}))


def _upgrade(snapshot: JsonObject) -> JsonObject:
    version = snapshot.get("tether_snapshot")
    if "tether_snapshot" not in snapshot:
        raise SnapshotError(
            f'not a tether snapshot: the "tether_snapshot" version field is missing '
            f"(supported versions: {_supported()})"
        )
    if not is_int(version):
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
        if not is_int(upgraded) or upgraded <= version:
            raise SnapshotError(f"the migration of snapshot version {version} did not upgrade it")
        version = upgraded
    return snapshot


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
    rows = _import_rows(checked, session_id, workspace)

    async def work(conn: aiosqlite.Connection) -> None:
        try:
            await conn.execute(
                "INSERT INTO sessions (id, workspace, title, mode, created_at, updated_at, metadata)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows.session,
            )
        except sqlite3.IntegrityError as exc:
            raise SnapshotError(
                f"session {session_id!r} already exists in this workspace"
                + ("; restore it without keeping its id" if keep_id else "")
            ) from exc
        await _insert_rows(conn, session_id, rows)
        await import_checkpoints(conn, session_id, checked)

    await store.transaction(work)
    if import_rules:
        for rule in checked["rules"]:
            await store.rules.add(rule["kind"], rule["pattern"], rule["decision"])
    return session_id


@dataclass(slots=True)
class _Rows:
    """A checked snapshot as the rows of one session's import."""

    session: tuple[Any, ...]
    turns: list[tuple[Any, ...]]
    messages: list[tuple[Any, ...]]
    reports: list[tuple[Any, ...]]


def _import_rows(checked: CheckedSnapshot, session_id: str, workspace: str | None) -> _Rows:
    """The rows to insert; a session with a new id gets new turn ids (and its running
    turns stopped), which its messages and reports follow."""
    source = checked["session"]
    fresh = session_id != source["id"]
    turns = _stop_running(checked["turns"], checked["messages"]) if fresh else checked["turns"]
    fresh_ids = new_turn_ids(len(turns)) if fresh else [t["id"] for t in turns]
    turn_map = {t["id"]: new for t, new in zip(turns, fresh_ids)}
    now = time.time()
    session = (
        session_id, workspace if workspace is not None else source["workspace"], source["title"],
        source["mode"], source["created_at"], now, encode_json(source["metadata"]),
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
    return _Rows(session, turn_rows, message_rows, report_rows)


async def _insert_rows(conn: aiosqlite.Connection, session_id: str, rows: _Rows) -> None:
    """The turns, messages (with their search index) and reports of an imported session.

    Rows go to TEMP tables first, then over in one INSERT ... SELECT each: executed row
    by row, the schema's CHECK (... IN (...)) constraints cost more than the insert
    itself (SQLite builds their lists again for every execution)."""
    await conn.execute(
        "CREATE TEMP TABLE import_turns (id, seq, status, stop_reason, started_at, finished_at, error, pending)"
    )
    await conn.executemany("INSERT INTO import_turns VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows.turns)
    try:
        await conn.execute(
            "INSERT INTO turns (id, session_id, seq, status, stop_reason, started_at, finished_at, error,"
            " pending) SELECT id, ?, seq, status, stop_reason, started_at, finished_at, error, pending"
            " FROM import_turns ORDER BY rowid",
            (session_id,),
        )
    except sqlite3.IntegrityError as exc:
        raise SnapshotError(f"a turn of session {session_id!r} already exists: {exc}") from exc
    await conn.execute("CREATE TEMP TABLE import_messages (turn_id, seq, role, body, status, created_at, text)")
    await conn.executemany("INSERT INTO import_messages VALUES (?, ?, ?, ?, ?, ?, ?)", rows.messages)
    await conn.execute(
        "INSERT INTO messages (session_id, turn_id, seq, role, body, status, created_at)"
        " SELECT ?, turn_id, seq, role, body, status, created_at FROM import_messages ORDER BY rowid",
        (session_id,),
    )
    await _index_messages(conn, session_id, len(rows.messages))
    await conn.execute("DROP TABLE temp.import_turns")
    await conn.execute("DROP TABLE temp.import_messages")
    await conn.executemany(
        "INSERT INTO run_reports (turn_id, session_id, report, created_at) VALUES (?, ?, ?, ?)", rows.reports
    )


async def _index_messages(conn: aiosqlite.Connection, session_id: str, imported: int) -> None:
    """The search index (schema v5: written by the store), by the ids the messages got:
    one INSERT in our write transaction numbers them on from the table's largest id
    (AUTOINCREMENT), in import order, which is checked; else they are looked up by seq
    (30-60 ms more for 10,000 messages)."""
    ((low, high, count),) = await conn.execute_fetchall(
        "SELECT min(id), max(id), count(*) FROM messages WHERE session_id = ?", (session_id,)
    )
    if count == imported and count and high - low + 1 == count:
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


def _stop_running(turns: list[JsonObject], messages: list[JsonObject]) -> list[JsonObject]:
    """The turns of a copy: one still running (or waiting for approval) is ``interrupted``,
    finished when its last message was, without pending approvals."""
    running = {t["id"] for t in turns if t["status"] == "running"}
    if not running:
        return turns
    last: JsonObject = {}
    for m in messages:
        if m["turn_id"] in running:
            last[m["turn_id"]] = max(last.get(m["turn_id"], m["created_at"]), m["created_at"])
    return [
        {**t, "status": "interrupted", "finished_at": last.get(t["id"], t["started_at"]), "pending": None}
        if t["id"] in running else t
        for t in turns
    ]


def _remap_report(
    report: JsonObject, old_session: str, new_session: str, old_turn: str, turn_map: dict[str, str]
) -> JsonObject:
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
        keep_until(snapshot, upto_seq)
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
