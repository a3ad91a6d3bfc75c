"""``HistoryStore``: one workspace's sessions, turns, messages and run reports.

Owns: the public store API, one transaction per call (a turn's start, a step, a turn's end),
caller input validated and encoded before any lock is taken, and the read queries.
Must not: decide *when* to commit (the agent's journal does, at each step boundary), format
anything for the wire, or delete rows other than through ``delete_session``.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tether.store import turns
from tether.store.database import Database, Spawn, Work
from tether.store.errors import StoreError
from tether.store.liveness import alive, this_process
from tether.store.pages import read_pages, turn_pages
from tether.store.records import (
    FINAL_TURN_STATUSES,
    MessageRecord,
    MessageView,
    SessionRecord,
    TurnMessageView,
    TurnRecord,
    decode_json,
    encode_json,
    message_row,
    parse_session_cursor,
    records_of_rows,
    session_cursor,
)
from tether.store.rules import RuleStore
from tether.store.turn_json import partial_text, pending_of, pending_text, report_text

if TYPE_CHECKING:  # imported when first stored or read: opening a store does not
    from collections.abc import AsyncIterator, Callable, Sequence
    from types import TracebackType

    import aiosqlite

    from tether_protocol import JsonObject, PendingApprovals, RunReport
    from tether_protocol.conversation import AssistantMessage

__all__ = ["HistoryStore"]

_T = TypeVar("_T")

_SESSION_COLUMNS = "id, workspace, title, mode, created_at, updated_at, metadata"
_NO_PARENT = "json_extract(s.metadata, '$.parentSessionId') IS NULL"  # not a sub-agent's session
_TURN_COLUMNS = "id, session_id, seq, status, stop_reason, started_at, finished_at, error"
_MESSAGE_COLUMNS = "role, body, status, seq, turn_id, created_at"


class HistoryStore:
    """The history database of one workspace. Create with ``await HistoryStore.open(path)``.

    Safe to call from many asyncio tasks at once: each method is one query or
    one transaction, and ``Database`` keeps transactions from interleaving.
    """

    path: Path
    schema_version: int
    recovered_turns: int

    def __init__(self, db: Database) -> None:
        # use HistoryStore.open()
        self._db = db
        self.rules = RuleStore(db)
        self.path, self.schema_version = db.path, db.schema_version
        self.data_version = db.data_version  # what other connections committed: `Database.data_version`
        self.recovered_turns = 0

    @classmethod
    async def open(cls, path: Path, *, recover: bool = True, spawn: Spawn | None = None) -> HistoryStore:
        """Open or create the database at ``path`` and bring its schema up to date.

        With ``recover`` (the daemon's case) turns still ``running`` belong to a
        process that died and become ``interrupted``, counted in ``recovered_turns``.
        A second opener of a live daemon's database passes ``recover=False``.
        ``spawn`` (the daemon's task group) runs the WAL checkpoints; without it they are
        tasks of the store's own, waited for by ``close``.
        """
        store = cls(await Database.open(Path(path), spawn))
        try:
            if recover:
                store.recovered_turns = await store._db.write(turns.interrupt_running)
        except BaseException:
            await store.close()
            raise
        return store

    async def close(self) -> None:
        await self._db.close()

    async def __aenter__(self) -> HistoryStore:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # -- raw access for the store's own modules (snapshots, search) ---------------

    async def query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """All rows of one read query; for modules of ``tether.store`` only."""
        return await self._db.read(sql, params)

    async def transaction(self, work: Work[_T]) -> _T:
        """Run ``work(conn)`` as one write transaction; for modules of ``tether.store`` only."""
        return await self._db.write(work)

    async def transaction_at_once(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """`transaction` for plain sqlite3 work, in one trip to the connection's thread."""
        return await self._db.write_at_once(work)

    # -- sessions ---------------------------------------------------------------

    async def create_session(
        self,
        session_id: str,
        workspace: str,
        mode: str,
        title: str | None = None,
        metadata: JsonObject | None = None,
    ) -> SessionRecord:
        now = time.time()
        record = SessionRecord(session_id, workspace, title, mode, now, now, dict(metadata or {}))
        row = (session_id, workspace, title, mode, now, now, encode_json(record.metadata))

        async def work(conn: aiosqlite.Connection) -> None:
            try:
                await conn.execute(f"INSERT INTO sessions ({_SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)", row)
            except sqlite3.IntegrityError as exc:
                raise StoreError(f"session {session_id!r} already exists") from exc

        await self._db.write(work)
        return record

    async def get_session(self, session_id: str) -> SessionRecord | None:
        rows = await self._db.read(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,))
        return SessionRecord.from_row(rows[0]) if rows else None

    async def list_sessions(
        self, limit: int = 50, cursor: str | None = None, *, include_empty: bool = True, include_children: bool = True
    ) -> tuple[list[SessionRecord], str | None]:
        """A page of sessions, most recently updated first, and the next page's cursor;
        without ``include_empty``, only those with at least one message; without
        ``include_children``, no sub-agent's session (one whose metadata names a parent).

        Keyset paging on (updated_at, id): a session that does not change between
        two calls is never repeated or skipped, however many are added meanwhile.
        """
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        where = "WHERE 1" if include_empty else "WHERE EXISTS (SELECT 1 FROM messages AS m WHERE m.session_id = s.id)"
        where += "" if include_children else f" AND {_NO_PARENT}"
        after: tuple[Any, ...] = ()
        if cursor is not None:
            where, after = f"{where} AND (updated_at, id) < (?, ?)", parse_session_cursor(cursor)
        rows = await self._db.read(
            f"SELECT {_SESSION_COLUMNS} FROM sessions AS s {where} ORDER BY updated_at DESC, id DESC LIMIT ?",
            (*after, limit + 1),  # one extra row tells whether another page exists
        )
        page = [SessionRecord.from_row(row) for row in rows[:limit]]
        return page, (session_cursor(page[-1]) if len(rows) > limit else None)

    async def latest_session(self) -> SessionRecord | None:
        """The most recently updated session with a conversation: one just created and never
        prompted (an editor opening a session at start), or a sub-agent's, is not "where I left off"."""
        rows = await self._db.read(
            f"SELECT {_SESSION_COLUMNS} FROM sessions AS s"
            f" WHERE EXISTS (SELECT 1 FROM messages AS m WHERE m.session_id = s.id) AND {_NO_PARENT}"
            " ORDER BY updated_at DESC, id DESC LIMIT 1"
        )
        return SessionRecord.from_row(rows[0]) if rows else None

    async def update_session(
        self,
        session_id: str,
        *,
        title: str | None = None,
        mode: str | None = None,
        metadata: JsonObject | None = None,
    ) -> None:
        """Set the fields given (``metadata`` replaces the whole dict) and bump ``updated_at``."""
        assignments: list[str] = ["updated_at = ?"]
        params: list[Any] = [time.time()]
        for column, value in (("title", title), ("mode", mode)):
            if value is not None:
                assignments.append(f"{column} = ?")
                params.append(value)
        if metadata is not None:
            assignments.append("metadata = ?")
            params.append(encode_json(metadata))
        sql = f"UPDATE sessions SET {', '.join(assignments)} WHERE id = ?"

        async def work(conn: aiosqlite.Connection) -> None:
            cursor = await conn.execute(sql, (*params, session_id))
            if cursor.rowcount == 0:
                raise StoreError(f"no session {session_id!r}")

        await self._db.write(work)

    async def delete_session(self, session_id: str) -> bool:
        """Delete a session with its turns, messages and reports; False if there was none."""

        async def work(conn: aiosqlite.Connection) -> bool:
            # the ON DELETE CASCADEs (foreign_keys=ON) take the turns, messages and reports
            cursor = await conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            return cursor.rowcount > 0

        return await self._db.write(work)

    # -- turns and messages -----------------------------------------------------

    async def begin_turn(self, session_id: str, turn_id: str, user_message: MessageRecord) -> TurnRecord:
        """Start turn ``seq = previous + 1`` (status ``running``) together with its first message."""
        now = time.time()
        first = message_row(user_message, now)
        return await self._db.write_at_once(lambda conn: turns.insert_turn(conn, session_id, turn_id, first, now))

    async def append_messages(self, session_id: str, turn_id: str, messages: Sequence[MessageRecord]) -> list[int]:
        """Commit one step's messages after the session's last one; returns their seqs."""
        if not messages:
            return []
        now = time.time()
        rows = [message_row(message, now) for message in messages]
        return await self._db.write_at_once(lambda conn: turns.insert_step(conn, session_id, turn_id, rows, now))

    async def commit_step(
        self, session_id: str, turn_id: str, messages: Sequence[MessageRecord], pending: PendingApprovals | None
    ) -> list[int]:
        """``append_messages`` and ``set_pending(turn_id, pending)`` in one transaction, the
        streamed partial cleared with them (the committed step supersedes it): a kill
        between the two would leave calls waiting whose results are stored (run again on
        resume), or results without the calls still to run."""
        now = time.time()
        rows = [message_row(message, now) for message in messages]
        value = pending_text(pending)

        def work(conn: sqlite3.Connection) -> list[int]:
            seqs = turns.insert_step(conn, session_id, turn_id, rows, now) if rows else []
            conn.execute("UPDATE turns SET pending = ?, partial = NULL WHERE id = ?", (value, turn_id))
            return seqs

        return await self._db.write_at_once(work)

    async def finish_turn(
        self,
        turn_id: str,
        status: str,
        stop_reason: str | None,
        error: str | None = None,
        report: RunReport | None = None,
    ) -> None:
        """Record how a turn ended and, if given, its run report (replacing an earlier one),
        stored as it is sent (``_tether/session/report``: the protocol's one converter)."""
        if status not in FINAL_TURN_STATUSES:
            raise ValueError(f"a turn finishes as one of {sorted(FINAL_TURN_STATUSES)}, not {status!r}")
        text = None if report is None else report_text(report)
        now = time.time()
        await self._db.write_at_once(
            lambda conn: turns.close_turn(conn, turn_id, status, stop_reason, error, text, now)
        )

    async def set_pending(self, turn_id: str, pending: PendingApprovals | None) -> None:
        """Checkpoint (or clear) the tool calls a turn waits to have approved."""
        value = pending_text(pending)

        async def work(conn: aiosqlite.Connection) -> None:
            await conn.execute("UPDATE turns SET pending = ? WHERE id = ?", (value, turn_id))

        await self._db.write(work)

    async def save_partial(self, turn_id: str, partial: AssistantMessage | None) -> None:
        """Save the streamed output of the step in flight (a time-based checkpoint), stored
        as a message body (the conversation's one converter)."""
        value = partial_text(partial)

        async def work(conn: aiosqlite.Connection) -> None:
            await conn.execute("UPDATE turns SET partial = ? WHERE id = ?", (value, turn_id))

        await self._db.write(work)

    async def waiting_turn(self, session_id: str) -> tuple[str, PendingApprovals] | None:
        """The turn of this session waiting for an approval (id, pending calls) that this
        daemon may resume, if any: another live daemon's waiting turn is left to it."""
        rows = await self._db.read(
            "SELECT id, pending, owner FROM turns WHERE session_id = ? AND status = 'running'"
            " AND pending IS NOT NULL ORDER BY seq DESC LIMIT 1",
            (session_id,),
        )
        owner = rows[0][2] if rows else None
        if not rows or (alive(owner) and owner != this_process()):
            return None
        return rows[0][0], pending_of(self.path, session_id, rows[0][0], rows[0][1])

    async def turn_elsewhere(self, session_id: str) -> tuple[str, PendingApprovals | None, str] | None:
        """The turn of this session another live daemon is running (id, the calls it waits
        to have approved or None, that daemon's pid), if any."""
        other = turns.elsewhere(await self._db.read(turns.RUNNING_SQL, (session_id,)))
        if other is None:
            return None
        turn_id, pending, pid = other
        return turn_id, None if pending is None else pending_of(self.path, session_id, turn_id, pending), pid

    async def claim_turn(self, turn_id: str) -> bool:
        """Make this daemon the one that runs a waiting turn (a resumed one), unless another
        live daemon already does; whether it did. One write transaction: of two daemons
        that loaded the session after a crash, only the first resumes the turn."""
        me = this_process()

        async def work(conn: aiosqlite.Connection) -> bool:
            rows = await conn.execute_fetchall(
                "SELECT owner FROM turns WHERE id = ? AND status = 'running' AND pending IS NOT NULL", (turn_id,)
            )
            owner = next(iter(rows))[0] if rows else None
            if not rows or (owner != me and alive(owner)):
                return False
            await conn.execute("UPDATE turns SET owner = ? WHERE id = ?", (me, turn_id))
            return True

        return await self._db.write(work)

    async def cancel_waiting(self, session_id: str, turn_id: str, messages: Sequence[MessageRecord]) -> bool:
        """End a turn waiting for approval that no live daemon runs as ``cancelled``, with
        ``messages`` (the results of its calls still to run) committed in the same
        transaction; whether it did (False: it ended meanwhile, or another live daemon
        claimed it)."""
        now = time.time()
        rows = [message_row(message, now) for message in messages]
        me = this_process()

        def work(conn: sqlite3.Connection) -> bool:
            found = conn.execute(
                "SELECT owner FROM turns WHERE id = ? AND session_id = ? AND status = 'running'"
                " AND pending IS NOT NULL",
                (turn_id, session_id),
            ).fetchone()
            if found is None or (found[0] != me and alive(found[0])):
                return False
            if rows:
                turns.insert_step(conn, session_id, turn_id, rows, now)
            turns.close_turn(conn, turn_id, "cancelled", "cancelled", None, None, now)
            return True

        return await self._db.write_at_once(work)

    async def load_messages(self, session_id: str) -> list[MessageRecord]:
        """The conversation as it stands (without the messages a rewind took out)."""
        rows = await self._db.read(
            f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND rewound IS NULL ORDER BY seq",
            (session_id,),
        )
        return records_of_rows(rows)

    def message_pages(
        self, session_id: str, size: int = 1024, first: int | None = None
    ) -> AsyncIterator[list[MessageView]]:
        """The session's messages as ``(role, body, status)``, ``size`` at a time (the first
        page ``first``, if given: a small one reaches the caller sooner), in order: what
        showing a session again needs, without the rest of a record (a 10,000-message
        ``session/load`` read and built 20,000 values fewer). The next page is read (in the
        connection's thread) while the caller works on this one. Close it with
        ``contextlib.aclosing`` when leaving early. Pages are separate reads: messages
        added meanwhile at the end are included, as a later read would see them."""
        return read_pages(self._db, session_id, size, first)

    def turn_message_pages(
        self, session_id: str, size: int = 1024, first: int | None = None
    ) -> AsyncIterator[list[TurnMessageView]]:
        """``message_pages`` with each message's turn id (ACP v2's replay derives message ids)."""
        return turn_pages(self._db, session_id, size, first)

    async def message_count(self, session_id: str) -> int:
        rows = await self._db.read("SELECT COUNT(*) FROM messages WHERE session_id = ?", (session_id,))
        return int(rows[0][0])

    async def list_turns(self, session_id: str) -> list[TurnRecord]:
        rows = await self._db.read(
            f"SELECT {_TURN_COLUMNS} FROM turns WHERE session_id = ? ORDER BY seq", (session_id,)
        )
        return [TurnRecord.from_row(row) for row in rows]

    async def get_report(self, turn_id: str) -> JsonObject | None:
        rows = await self._db.read("SELECT report FROM run_reports WHERE turn_id = ?", (turn_id,))
        return decode_json(rows[0][0]) if rows else None

    async def list_reports(self, session_id: str) -> list[JsonObject]:
        """The session's run reports in turn order."""
        rows = await self._db.read(
            "SELECT r.report FROM run_reports AS r JOIN turns AS t ON t.id = r.turn_id"
            " WHERE r.session_id = ? ORDER BY t.seq",
            (session_id,),
        )
        return [decode_json(row[0]) for row in rows]
