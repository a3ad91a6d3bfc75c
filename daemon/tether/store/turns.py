"""The SQL of a turn's lifecycle: begin, step commit, finish, crash recovery.

Owns: the bodies of the write transactions ``HistoryStore`` runs for turns, run inside the
caller's, and with them the numbering (turn seq 1, 2, 3 and message seq 0, 1, 2 per session, no
gaps) and recovering the turns of daemons that died (``interrupt_running``).
Must not: open or commit transactions, validate or encode caller input, or delete anything.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import TYPE_CHECKING, Any

from tether.store.errors import StoreError, TurnElsewhere, TurnWaiting
from tether.store.liveness import alive, this_process
from tether.store.records import MessageRow, TurnRecord, indexed_text

if TYPE_CHECKING:  # the conversation model is imported when an interrupted turn is recovered
    from collections.abc import Iterable, Sequence

    import aiosqlite

    from tether_protocol.conversation import AssistantMessage

__all__ = ["MessageRow", "close_turn", "insert_step", "insert_turn", "interrupt_running", "touch_session"]


_INSERT_MESSAGE = (
    "INSERT INTO messages (session_id, turn_id, seq, role, body, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
# The full-text index rows (schema v5: written here, in the transaction of the messages)
_INDEX_LAST = "INSERT INTO messages_fts (rowid, text) VALUES (last_insert_rowid(), ?)"
_INDEX_BY_SEQ = "INSERT INTO messages_fts (rowid, text) SELECT id, ? FROM messages WHERE session_id = ? AND seq = ?"
# MAX over the UNIQUE (session_id, seq) index: a lookup, not a scan
_NEXT_MESSAGE_SEQ = "(SELECT COALESCE(MAX(seq), -1) + 1 FROM messages WHERE session_id = ?)"
_NEXT_MESSAGE_SEQ_SQL = f"SELECT {_NEXT_MESSAGE_SEQ}"
_NEXT_TURN_SEQ = "(SELECT COALESCE(MAX(seq), 0) + 1 FROM turns WHERE session_id = ?)"


def touch_session(conn: sqlite3.Connection, session_id: str, now: float) -> None:
    """Bump ``updated_at``; doubles as the check that the session exists."""
    if conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, session_id)).rowcount == 0:
        raise StoreError(f"no session {session_id!r}")


# A session's running turns, for ``elsewhere``
RUNNING_SQL = "SELECT id, pending, owner FROM turns WHERE session_id = ? AND status = 'running'"


def elsewhere(running: Iterable[Any]) -> tuple[str, str | None, str] | None:
    """Of ``RUNNING_SQL``'s rows, the turn another live daemon runs: (id, the stored
    checkpoint of the calls it waits to have approved or None, that daemon's pid)."""
    me = this_process()
    for turn_id, pending, owner in running:
        if owner != me and alive(owner):
            return turn_id, pending, owner.partition(":")[0]
    return None


def insert_turn(conn: sqlite3.Connection, session_id: str, turn_id: str, first: MessageRow, now: float) -> TurnRecord:
    """Plain sqlite3 calls: run with its BEGIN and COMMIT in one trip to the connection's
    thread (`Database.write_at_once`), before the turn's first chunk."""
    running = conn.execute(RUNNING_SQL, (session_id,)).fetchall()
    if (other := elsewhere(running)) is not None:
        raise TurnElsewhere(session_id, other[0], other[2])
    # one waiting for approval that no live daemon runs: answered (or cancelled) first,
    # else its calls would stay unanswered in the middle of the conversation
    if (waiting := next((row[0] for row in running if row[1] is not None), None)) is not None:
        raise TurnWaiting(session_id, waiting)
    touch_session(conn, session_id, now)
    turn_seq, message_seq = conn.execute(
        f"SELECT {_NEXT_TURN_SEQ}, {_NEXT_MESSAGE_SEQ}", (session_id, session_id)
    ).fetchone()
    try:
        conn.execute(
            "INSERT INTO turns (id, session_id, seq, status, started_at, owner) VALUES (?, ?, ?, 'running', ?, ?)",
            (turn_id, session_id, turn_seq, now, this_process()),
        )
    except sqlite3.IntegrityError as exc:
        raise StoreError(f"turn {turn_id!r} already exists") from exc
    role, body, status, created_at, text, _changes = first
    conn.execute(_INSERT_MESSAGE, (session_id, turn_id, message_seq, role, body, status, created_at))
    if text:
        conn.execute(_INDEX_LAST, (text,))
    return TurnRecord(turn_id, session_id, turn_seq, "running", None, now, None, None)


def insert_step(
    conn: sqlite3.Connection, session_id: str, turn_id: str, messages: Sequence[MessageRow], now: float
) -> list[int]:
    """Append messages after the session's last one; returns the seqs they got."""
    row = conn.execute(
        f"SELECT session_id, {_NEXT_MESSAGE_SEQ} FROM turns WHERE id = ?", (session_id, turn_id)
    ).fetchone()
    if row is None:
        raise StoreError(f"no turn {turn_id!r}")
    owner, first = row
    if owner != session_id:
        raise StoreError(f"turn {turn_id!r} belongs to session {owner!r}, not {session_id!r}")
    conn.executemany(
        _INSERT_MESSAGE,
        [(session_id, turn_id, first + i, *message[:4]) for i, message in enumerate(messages)],
    )
    index = [(m[4], session_id, first + i) for i, m in enumerate(messages) if m[4]]
    if index:
        conn.executemany(_INDEX_BY_SEQ, index)
    changed = [(first + i, m[5]) for i, m in enumerate(messages) if m[5] is not None]
    if changed:  # checkpoints: the files the calls changed, with their results
        from tether.store.checkpoints import insert_changes

        insert_changes(conn, session_id, changed)
    touch_session(conn, session_id, now)
    return list(range(first, first + len(messages)))


def close_turn(
    conn: sqlite3.Connection,
    turn_id: str,
    status: str,
    stop_reason: str | None,
    error: str | None,
    report: str | None,
    now: float,
) -> None:
    row = conn.execute("SELECT session_id FROM turns WHERE id = ?", (turn_id,)).fetchone()
    if row is None:
        raise StoreError(f"no turn {turn_id!r}")
    session_id = row[0]
    conn.execute(
        "UPDATE turns SET status = ?, stop_reason = ?, error = ?, finished_at = ?,"
        " pending = NULL, partial = NULL WHERE id = ?",
        (status, stop_reason, error, now, turn_id),
    )
    if report is not None:
        # an upsert, not INSERT OR REPLACE: REPLACE deletes the old row underneath
        conn.execute(
            "INSERT INTO run_reports (turn_id, session_id, report, created_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (turn_id) DO UPDATE SET report = excluded.report, created_at = excluded.created_at",
            (turn_id, session_id, report, now),
        )
    touch_session(conn, session_id, now)


def _recovered(partial: str | None) -> AssistantMessage:
    """The assistant message of a turn's saved partial output (an empty one if none was
    saved, or if what was saved cannot be read: recovery never fails on it)."""
    from tether_protocol.conversation import AssistantMessage, message_from_json

    try:
        message = message_from_json(json.loads(partial), "assistant") if partial else None
    except (ValueError, TypeError):  # ConversationError is a ValueError, as a JSON error is
        message = None
    return message if isinstance(message, AssistantMessage) else AssistantMessage()


async def interrupt_running(conn: aiosqlite.Connection) -> int:
    """Recover turns whose daemon died; returns how many became ``interrupted``.

    A turn waiting for approval (``pending`` set) stays ``running``: the next daemon asks
    again and resumes it. A turn that was streaming gets its last saved partial output as
    an assistant message marked ``interrupted``; one with none saved (killed before the
    first save, or between steps) an empty one, so a replay shows where it stopped (the
    model is not sent it: ``registry.model_view``). Turns of live daemons are left alone.
    """
    rows = await conn.execute_fetchall(
        "SELECT id, session_id, owner, pending, partial FROM turns WHERE status = 'running'"
    )
    count = 0
    for turn_id, session_id, owner, pending, partial in rows:
        if alive(owner) or pending:
            continue
        # finished_at = the turn's last committed message, i.e. when it really stopped,
        # rather than whenever the daemon happened to restart
        await conn.execute(
            "UPDATE turns SET status = 'interrupted', partial = NULL, finished_at = COALESCE("
            "(SELECT MAX(created_at) FROM messages WHERE turn_id = turns.id), started_at)"
            " WHERE id = ?",
            (turn_id,),
        )
        seq_rows = await conn.execute_fetchall(_NEXT_MESSAGE_SEQ_SQL, (session_id,))
        from tether_protocol.conversation import message_to_json

        body = message_to_json(_recovered(partial))
        await conn.execute(
            _INSERT_MESSAGE,
            (
                session_id,
                turn_id,
                next(iter(seq_rows))[0],
                "assistant",
                json.dumps(body, ensure_ascii=False, separators=(",", ":")),
                "interrupted",
                time.time(),
            ),
        )
        text = indexed_text("assistant", body)
        if text:
            await conn.execute(_INDEX_LAST, (text,))
        count += 1
    return count
