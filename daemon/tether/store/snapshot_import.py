"""Importing one session from a snapshot's entries as they come, a batch of rows at a time.

Owns: ``SnapshotImport``, fed the top-level entries in order inside the import's transaction
(turns before the messages and reports that name them): each record checked unless the whole
snapshot was, a copy's turns given new ids, rows inserted a batch at a time, never held whole.
Must not: open transactions, choose the session's id, workspace or mode, or add approval rules.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Iterable
from typing import Any

import aiosqlite

from tether.store.records import encode_json, new_turn_ids
from tether.store.snapshot_checkpoints import check_checkpoint_data, check_rewound, import_checkpoints
from tether.store.snapshot_checks import (
    REQUIRED_LISTS,
    SnapshotError,
    check_bodies,
    check_message,
    check_report,
    check_rules,
    check_turn,
)
from tether.store.snapshot_pending import WaitingCalls
from tether.store.snapshot_results import ResultFields
from tether.store.snapshot_rows import (
    finish_stopped,
    insert_messages,
    insert_reports,
    insert_turns,
    message_row,
    report_row,
    turn_row,
)
from tether_protocol import JsonObject, type_name

__all__ = ["SnapshotImport"]

_BATCH = 2048
_BATCH_BYTES = 8 << 20  # a batch of big messages goes in sooner
_FIRST = REQUIRED_LISTS[0]  # the turns, which the records after them name
_CHILD_LINK = ("parentSessionId", "parentCallId")  # a sub-agent's session's metadata (store/children.py)


class SnapshotImport:
    """One session's import under ``session_id`` (a copy, with new turn ids, when it is
    not the snapshot's ``source_id``); ``checked``: the records were checked already."""

    def __init__(
        self, conn: aiosqlite.Connection, session_id: str, source_id: str, checked: bool, user_memory: str | None = None
    ) -> None:
        self.conn, self.session_id, self.checked = conn, session_id, checked
        self.user_memory = user_memory  # this user's MEMORY.md (ResultFields), None: as recorded
        self.fresh = session_id != source_id
        self.source_id = source_id
        self.turns: dict[str, tuple[str, float | None]] = {}  # snapshot turn id -> (its id here, finished_at)
        self._seqs: set[int] = set()
        self._stopped: list[str] = []
        self._waiting: set[str] = set()  # the turns that still wait for approval (kept ids)
        self._calls = WaitingCalls()  # the pending calls kept, matched against the model's calls
        self._results: ResultFields | None = None  # (made once the workspace is known)
        self._last_seq = -1
        self._hidden: list[tuple[int, int]] = []  # (rewind id, seq) of the messages a rewind took out
        self._seen: set[str] = set()
        self._found: dict[str, Any] = {}
        self.messages = 0
        self._inserting: asyncio.Future[None] | None = None

    async def insert_session(self, session: JsonObject, workspace: str | None) -> None:
        metadata = session["metadata"]
        if self.fresh:  # a copy was made by no `delegate` call: it must not stand in for a parent's sub-agent
            metadata = {key: value for key, value in metadata.items() if key not in _CHILD_LINK}
        else:
            await self._refuse_taken_link(metadata)
        here = workspace if workspace is not None else session["workspace"]
        self._results = ResultFields(here, session["workspace"], self.user_memory)
        row = (
            self.session_id,
            here,
            session["title"],
            session["mode"],
            session["created_at"],
            time.time(),
            encode_json(metadata),
        )
        try:
            await self.conn.execute(
                "INSERT INTO sessions (id, workspace, title, mode, created_at, updated_at, metadata)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                row,
            )
        except aiosqlite.IntegrityError as exc:
            raise SnapshotError(f"session {self.session_id!r} already exists in this workspace") from exc

    async def _refuse_taken_link(self, metadata: JsonObject) -> None:
        """A kept id naming a parent's call another session is the sub-agent of (a forged link
        would replay in its place): SnapshotError."""
        parent, call = (metadata.get(key) for key in _CHILD_LINK)
        if parent is None or call is None:
            return
        async with self.conn.execute(
            "SELECT id FROM sessions WHERE json_extract(metadata, '$.parentSessionId') = ?"
            " AND json_extract(metadata, '$.parentCallId') = ? AND id != ? LIMIT 1",
            (parent, call, self.session_id),
        ) as cursor:
            taken = await cursor.fetchone()
        if taken is not None:
            raise SnapshotError(
                f"session.metadata names call {call!r} of session {parent!r} as its parent, "
                f"whose sub-agent is session {taken[0]!r}"
            )

    async def feed(self, key: str, value: object) -> None:
        """One top-level entry of the snapshot (a list may be any iterable of its items)."""
        if key in REQUIRED_LISTS:
            if key in self._found:
                raise SnapshotError(f'"{key}" appears twice in the snapshot')
            if isinstance(value, (str, bytes, dict)) or not isinstance(value, Iterable):
                raise SnapshotError(f'"{key}" must be a list, not {type_name(value)}')
            if key != _FIRST and _FIRST not in self._found:
                raise SnapshotError(f'"{_FIRST}" must come before "{key}" in the snapshot (as dump writes it)')
            self._found[key] = True
            await {"turns": self._turns, "messages": self._messages, "reports": self._reports}[key](value)
        elif key in ("rules", "checkpoints"):
            self._found[key] = value

    async def finish(self) -> list[JsonObject]:
        """After the last entry: what is missing is refused, the checkpoints go in; the
        snapshot's rules (checked) are returned."""
        await self.settle(raising=True)
        for key in REQUIRED_LISTS:
            if key not in self._found:
                raise SnapshotError(f'"{key}" must be a list, not missing')
        rules: list[JsonObject] = self._found.get("rules", [])
        if not self.checked:
            if not isinstance(rules, list):
                raise SnapshotError(f'"rules" must be a list, not {type_name(rules)}')
            check_rules(rules)
            check_checkpoint_data(self._found.get("checkpoints"))
        self._calls.check()
        await import_checkpoints(self.conn, self.session_id, self._found.get("checkpoints"), self._hidden)
        if self._stopped:
            await finish_stopped(self.conn, self._stopped)
        return rules

    async def _turns(self, items: Iterable[Any]) -> None:
        ids: set[str] = set()
        batch: list[JsonObject] = []
        for i, turn in enumerate(items):
            if not self.checked:
                check_turn(turn, i, ids, self._seqs)
            if turn["pending"] is not None and not (self.fresh and turn["status"] == "running"):
                self._calls.add_turn(turn, i)
            batch.append(turn)
            if len(batch) == _BATCH:
                await self._turn_batch(batch)
                batch = []
        await self._turn_batch(batch)

    async def _turn_batch(self, turns: list[JsonObject]) -> None:
        if not turns:
            return
        fresh = new_turn_ids(len(turns)) if self.fresh else [t["id"] for t in turns]
        rows = [turn_row(t, new, self.fresh) for t, new in zip(turns, fresh, strict=True)]
        for turn, row in zip(turns, rows, strict=True):
            self.turns[turn["id"]] = (row[0], row[5])
            if self.fresh and turn["status"] == "running":
                self._stopped.append(row[0])
            elif not self.fresh and turn.get("pending") is not None:
                self._waiting.add(turn["id"])
        await self._insert(insert_turns(self.conn, self.session_id, rows))

    async def _messages(self, items: Iterable[Any]) -> None:
        rows: list[tuple[Any, ...]] = []
        batch: list[JsonObject] = []  # their bodies are checked at once, before they go in
        size = 0
        for i, message in enumerate(items):
            if not self.checked:
                self._check_message(message, i, batch)
            turn = message["turn_id"]
            if message.get("rewound") is not None:
                if turn in self._waiting:  # its calls would be asked again, and run, out of the transcript
                    raise SnapshotError(
                        f"messages[{i}].rewound: turn {turn!r} waits for approval, and a rewind "
                        f"never takes out a waiting turn's messages"
                    )
                self._hidden.append((message["rewound"], message["seq"]))
            row = message_row(message, None if turn is None else self.turns[turn][0])
            rows.append(row)
            batch.append(message)
            size += len(row[3])
            if len(rows) == _BATCH or size >= _BATCH_BYTES:
                await self._message_batch(rows, batch, i + 1)
                rows, batch, size = [], [], 0
        await self._message_batch(rows, batch, self.messages + len(rows))

    def _check_message(self, message: Any, i: int, batch: list[JsonObject]) -> None:
        try:
            self._last_seq = check_message(message, i, self._last_seq, self.turns.keys())
            if message.get("rewound") is not None:
                check_rewound(message["rewound"], f"messages[{i}].rewound")
        except SnapshotError:
            check_bodies(batch, i - len(batch))  # an earlier message's body is the first mistake
            raise

    async def _message_batch(self, rows: list[tuple[Any, ...]], batch: list[JsonObject], end: int) -> None:
        if not self.checked:
            check_bodies(batch, end - len(batch))
        first = end - len(batch)
        for j, message in enumerate(batch):  # (their bodies are checked now)
            self._calls.see(message)
            if self._results is not None and self._results.see(message, first + j):
                rows[j] = message_row(message, rows[j][0])  # a location moved into this workspace
        await self._insert(insert_messages(self.conn, self.session_id, rows))
        self.messages += len(rows)

    async def _insert(self, batch: Coroutine[Any, Any, None]) -> None:
        """Insert a batch (in the connection's thread) while the next one is read and
        checked here: the previous batch is waited for first, so they go in in order."""
        try:
            await self.settle(raising=True)
        except BaseException:
            batch.close()  # never begun
            raise
        self._inserting = asyncio.ensure_future(batch)

    async def settle(self, *, raising: bool = False) -> None:
        """Wait for the batch being inserted; on the way out of a failed import its own
        error is dropped (the import's is raised), and nothing is inserted after the
        transaction's rollback."""
        inserting, self._inserting = self._inserting, None
        if inserting is not None:
            try:
                await inserting
            except Exception:
                if raising:
                    raise

    async def _reports(self, items: Iterable[Any]) -> None:
        rows: list[tuple[Any, ...]] = []
        now = time.time()
        for i, entry in enumerate(items):
            if not self.checked:
                check_report(entry, i, self.turns.keys(), self._seen)
            new_id, finished = self.turns[entry["turn_id"]]
            report = self._remap(entry["report"], entry["turn_id"], new_id)
            rows.append(report_row(report, new_id, self.session_id, finished or now))
            if len(rows) == _BATCH:
                await self._insert(insert_reports(self.conn, rows))
                rows = []
        await self._insert(insert_reports(self.conn, rows))

    def _remap(self, report: JsonObject, old_turn: str, new_turn: str) -> JsonObject:
        """A copy's report names the copy (its ``sessionId`` and ``turnId``)."""
        if not self.fresh:
            return report
        report = dict(report)
        if report.get("sessionId") == self.source_id:
            report["sessionId"] = self.session_id
        if report.get("turnId") == old_turn:
            report["turnId"] = new_turn
        return report
