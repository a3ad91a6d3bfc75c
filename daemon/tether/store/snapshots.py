"""Session snapshots: export a stored session as one JSON-able dict, import it, fork it (SPEC §3.28).

Owns: the snapshot API, upgrading older formats through ``MIGRATIONS`` before checking, importing
one session in one transaction (whole, or read from a file a record at a time: ``open_snapshot``,
``import_stream``), and forking (an export cut at a message, imported as a new session).
Must not: speak the wire protocol, pick workspaces or stores, or add approval rules unless asked.
"""

from __future__ import annotations

import copy
import itertools
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.store.snapshot_checkpoints import check_checkpoints, keep_until
from tether.store.snapshot_checks import (
    SNAPSHOT_LISTS,
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
from tether.store.snapshot_import import SnapshotImport
from tether_protocol import JsonObject, type_name

if TYPE_CHECKING:
    import aiosqlite

    from tether.store.history import HistoryStore
    from tether.store.snapshot_reader import SnapshotReader

__all__ = [
    "MIGRATIONS",
    "SNAPSHOT_VERSION",
    "SnapshotError",
    "check_snapshot",
    "export_session",
    "export_session_json",
    "fork_session",
    "import_session",
    "import_stream",
    "new_session_id",
    "open_snapshot",
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
    for key in SNAPSHOT_LISTS:
        if isinstance(snapshot.get(key), list):
            snapshot[key] = [dict(item) if isinstance(item, dict) else item for item in snapshot[key]]
    check_session(snapshot.get("session"))
    turn_ids = check_turns(listed(snapshot, "turns"))
    check_messages(listed(snapshot, "messages"), turn_ids)
    check_reports(listed(snapshot, "reports"), turn_ids)
    check_rules(listed(snapshot, "rules"))
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
                f"snapshot version {version} is not supported{newer}; this tether reads versions {_supported()}"
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
    entries = [(key, checked[key]) for key in (*SNAPSHOT_LISTS, "checkpoints")]
    session_id, rules = await _import(store, checked["session"], entries, True, keep_id, new_id, workspace)
    if import_rules:
        for rule in rules:
            await store.rules.add(rule["kind"], rule["pattern"], rule["decision"])
    return session_id


@dataclass(slots=True)
class SnapshotFile:
    """A snapshot being read from a file (``open_snapshot``): its ``session``, checked,
    and the ``rest`` of its entries still to read; or, when its layout cannot be read a
    record at a time (an older format version, or its lists before its session), the
    ``whole`` snapshot, checked."""

    session: JsonObject
    rest: Iterator[tuple[str, object]]
    whole: CheckedSnapshot | None = None


def open_snapshot(reader: SnapshotReader) -> SnapshotFile:
    """Read a snapshot's head: its version and session (checked), up to its turns."""
    entries = reader.entries()
    early: JsonObject = {}
    for key, value in entries:
        if isinstance(value, Iterator):
            version = early.get("tether_snapshot")
            if key == "turns" and version == SNAPSHOT_VERSION and isinstance(early.get("session"), dict):
                session = early.pop("session")
                check_session(session)
                return SnapshotFile(session, itertools.chain(early.items(), [(key, value)], entries))
            if "tether_snapshot" in early and version not in MIGRATIONS:
                _upgrade({"tether_snapshot": version})  # its error, before reading on
            value = list(value)
        early[key] = value
    whole = check_snapshot(early)
    return SnapshotFile(whole["session"], iter(()), whole)


async def import_stream(
    store: HistoryStore,
    snapshot: SnapshotFile,
    *,
    keep_id: bool = False,
    workspace: str | None = None,
    user_memory: str | None = None,
) -> tuple[str, list[JsonObject]]:
    """``import_session`` of a snapshot being read (``open_snapshot``), a batch of records
    at a time, in one transaction: a record that is wrong (or a file cut short) stores
    nothing. Returns the session's id and the snapshot's rules (not added). ``user_memory``:
    this user's MEMORY.md, where a `remember` result's location outside the workspace goes."""
    if snapshot.whole is not None:
        whole = snapshot.whole
        whole["session"] = snapshot.session  # as the caller left it (its mode)
        entries = [(key, whole[key]) for key in (*SNAPSHOT_LISTS, "checkpoints")]
        return await _import(store, snapshot.session, entries, True, keep_id, None, workspace, user_memory)
    return await _import(store, snapshot.session, snapshot.rest, False, keep_id, None, workspace, user_memory)


async def _import(
    store: HistoryStore,
    session: JsonObject,
    entries: Iterable[tuple[str, object]],
    checked: bool,
    keep_id: bool,
    new_id: str | None,
    workspace: str | None,
    user_memory: str | None = None,
) -> tuple[str, list[JsonObject]]:
    if keep_id and new_id is not None and new_id != session["id"]:
        raise ValueError("keep_id and new_id contradict each other")
    session_id = session["id"] if keep_id else (new_id or new_session_id())

    async def work(conn: aiosqlite.Connection) -> list[JsonObject]:
        importer = SnapshotImport(conn, session_id, session["id"], checked, user_memory)
        try:
            await importer.insert_session(session, workspace)
        except SnapshotError as exc:
            raise SnapshotError(f"{exc}{'; restore it without keeping its id' if keep_id else ''}") from None
        try:
            for key, value in entries:
                await importer.feed(key, value)
            return await importer.finish()
        except BaseException:
            await importer.settle()  # before the rollback: no batch goes in after it
            raise

    return session_id, await store.transaction(work)


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
            raise SnapshotError(f"session {session_id!r} has no message {upto_seq} to fork at (its messages: {last})")
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
    return await import_session(into or store, snapshot, new_id=new_id or new_session_id(), workspace=workspace)
