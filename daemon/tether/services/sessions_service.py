"""The sessions service: what can be done to stored sessions, once, for the daemon and the CLI.

Owns: `SessionsService` over any `StoreSource` (the restore policy, written once: snapshot checked,
target workspace, mode no looser, rules only when asked; docs/decisions/0018) and `LiveSessions`,
what needs live sessions (create, find to load, locate, stop, delete).
Must not: speak the protocol (its errors are its own), write SQL, or import more than the store and config.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..config import MODES, no_looser_mode
from ..store import (
    HistoryStore,
    MessageView,
    SessionRecord,
    StorageFault,
    StoreError,
)

if TYPE_CHECKING:
    from tether_protocol import PendingApprovals

    from ..agent.session import AgentSession
    from ..store.checkpoints import RewindRow
    from ..store.search import Hit
    from ..store.snapshot_reader import SnapshotReader
    from ..store.snapshots import SnapshotFile
    from .live_session import LiveSession
    from .registry import SessionRegistry
    from .rewind import Changed, RewindOutcome

# What a restored snapshot may add as rules: the kinds the approval gate knows.
RULE_KINDS = frozenset({"execute", "edit", "delete", "move"})

# Adds one rule (kind, pattern, decision) to the workspace whose store is given.
AddRule = Callable[[HistoryStore, str, str, str], Awaitable[object]]


class StoreSource(Protocol):
    async def store_for(self, workspace: Path) -> HistoryStore: ...


class BadSnapshot(Exception):
    """The snapshot cannot be restored (its format or its mode); the message says why."""


class RestoreFailed(Exception):
    """The store refused the snapshot (e.g. its id is taken); the message says why."""


class SessionGone(Exception):
    """The session was not found, or was deleted meanwhile; the message says why."""


class BadForkPoint(Exception):
    """A fork at a message that does not exist; the message says why."""


@dataclass(frozen=True, slots=True)
class StoredSession:
    """A stored session about to be loaded, and the turn it has not finished, if any."""

    store: HistoryStore
    record: SessionRecord
    # a turn a stopped daemon left waiting for approval, which this daemon resumes
    waiting: tuple[str, PendingApprovals] | None
    # a turn another live daemon runs: (id, the calls it waits to have approved, its pid)
    elsewhere: tuple[str, PendingApprovals | None, str] | None

    @property
    def pending(self) -> PendingApprovals | None:
        """The calls waiting for approval in either turn (shown pending, not failed)."""
        if self.waiting is not None:
            return self.waiting[1]
        return self.elsewhere[1] if self.elsewhere is not None else None


@dataclass(frozen=True, slots=True)
class RestoredRule:
    kind: str
    pattern: str
    decision: str
    imported: bool


@dataclass(frozen=True, slots=True)
class Restored:
    session_id: str
    workspace: Path
    mode: str
    requested_mode: str  # the snapshot's own (``mode`` is no looser than the limit)
    rules: list[RestoredRule]


def checked_snapshot(raw: Any) -> SnapshotFile:
    """A checked copy of a snapshot (from `dump`), with a mode this daemon knows."""
    from ..store.snapshots import SnapshotError, SnapshotFile, check_snapshot  # imported when used

    try:
        snapshot = check_snapshot(raw)
    except SnapshotError as exc:
        raise BadSnapshot(str(exc)) from exc
    return _known_mode(SnapshotFile(snapshot["session"], iter(()), snapshot))


def read_snapshot(reader: SnapshotReader) -> SnapshotFile:
    """A snapshot being read from a file: its head checked (the rest is checked as it is
    imported, ``SessionsService.restore``), with a mode this daemon knows."""
    from ..store.snapshots import SnapshotError, open_snapshot

    try:
        return _known_mode(open_snapshot(reader))
    except SnapshotError as exc:
        raise BadSnapshot(str(exc)) from exc


def _known_mode(snapshot: SnapshotFile) -> SnapshotFile:
    mode = snapshot.session["mode"]
    if mode not in MODES:
        raise BadSnapshot(f"session.mode must be one of {', '.join(MODES)}, not {mode!r}")
    return snapshot


def restore_workspace(snapshot: SnapshotFile, asked: Path | None, default: Callable[[], Path]) -> Path:
    """The workspace a snapshot is restored to: ``asked``, else the one it records when
    that is a directory here, else ``default()``."""
    if asked is not None:
        return asked
    recorded = snapshot.session["workspace"]
    if os.path.isabs(recorded) and os.path.isdir(recorded):
        return Path(os.path.realpath(recorded))
    return default()


class SessionsService:
    """Stored sessions: restore, fork, search, list, delete (over ``stores``)."""

    def __init__(self, stores: StoreSource) -> None:
        self.stores = stores

    async def restore(
        self,
        snapshot: SnapshotFile,
        workspace: Path,
        *,
        mode_limit: str,
        keep_id: bool,
        import_rules: bool,
        add_rule: AddRule,
    ) -> Restored:
        """Store a snapshot (``checked_snapshot``, or ``read_snapshot``: read and checked
        as it is imported, in one transaction) as a session of ``workspace``."""
        requested = snapshot.session["mode"]
        # a snapshot grants no more than a new session gets here (its rules likewise
        # wait for import_rules); the checked session is a copy, changed freely
        snapshot.session["mode"] = no_looser_mode(requested, mode_limit)
        from ..agent.memory_files import memory_file
        from ..store.snapshots import SnapshotError, import_stream

        store = await self.stores.store_for(workspace)
        mine = str(memory_file("user", workspace))  # a `remember` result's user file is this user's
        try:
            session_id, found = await import_stream(
                store, snapshot, keep_id=keep_id, workspace=str(workspace), user_memory=mine
            )
        except SnapshotError as exc:
            raise RestoreFailed(str(exc)) from exc
        rules = []
        for rule in found:
            ok = import_rules and rule["kind"] in RULE_KINDS and bool(rule["pattern"].strip())
            if ok:
                await add_rule(store, rule["kind"], rule["pattern"], rule["decision"])
            rules.append(RestoredRule(rule["kind"], rule["pattern"], rule["decision"], ok))
        return Restored(session_id, workspace, snapshot.session["mode"], requested, rules)

    async def fork(self, store: HistoryStore, source_id: str, source: Path, target: Path, upto_seq: int | None) -> str:
        """Copy a stored session (up to ``upto_seq``) into ``target``'s history; the new id."""
        from ..store.snapshots import SnapshotError, fork_session

        into = None if target == source else await self.stores.store_for(target)
        try:
            return await fork_session(store, source_id, upto_seq=upto_seq, into=into, workspace=str(target))
        except SnapshotError as exc:
            raise BadForkPoint(str(exc)) from exc
        except StorageFault:
            raise
        except StoreError as exc:  # the source was deleted meanwhile
            raise SessionGone(f"unknown session {source_id!r}: {exc}") from exc

    async def search(self, workspace: Path, query: str, limit: int) -> list[Hit]:
        from ..store.search import search

        return await search(await self.stores.store_for(workspace), query, limit=limit)

    async def list(
        self,
        workspace: Path,
        cursor: str | None = None,
        limit: int = 50,
        *,
        include_empty: bool = False,
        include_children: bool = False,
    ) -> tuple[list[SessionRecord], str | None]:
        """One page of the workspace's sessions, newest first (``InvalidCursor`` on a bad cursor).
        Sessions never prompted (no message: an editor opened a chat and left) only with
        ``include_empty``, sub-agents' sessions only with ``include_children``; every lister
        (session/list, `tether sessions list`) goes through here."""
        store = await self.stores.store_for(workspace)
        return await store.list_sessions(
            limit=limit, cursor=cursor, include_empty=include_empty, include_children=include_children
        )

    async def latest(self, workspace: Path) -> SessionRecord | None:
        return await (await self.stores.store_for(workspace)).latest_session()

    async def delete_stored(self, store: HistoryStore, session_id: str) -> bool:
        from ..store.checkpoints import drop_unused_blobs

        deleted = await store.delete_session(session_id)
        if deleted:
            await drop_unused_blobs(store)  # its files' contents, unless another session recorded them too
        return deleted

    async def rewind(self, store: HistoryStore, session_id: str, workspace: Path, **how: Any) -> RewindOutcome:
        """Take a stored session back to a turn, a message or before a rewind (``server/rewind.py``)."""
        from .rewind import rewind

        return await rewind(store, session_id, str(workspace), **how)

    async def changes(self, store: HistoryStore, session_id: str, turn: int | None) -> Sequence[Changed]:
        from .rewind import changes

        return await changes(store, session_id, turn)

    async def rewinds(self, store: HistoryStore, session_id: str) -> Sequence[RewindRow]:
        from ..store.checkpoints import rewinds

        return await rewinds(store, session_id)


class LiveSessions(SessionsService):
    """The daemon's sessions: the stored ones and the live ones of ``registry``."""

    def __init__(self, registry: SessionRegistry) -> None:
        super().__init__(registry)
        self.registry = registry

    async def create(self, workspace: Path, mode: str) -> AgentSession:
        store = await self.registry.store_for(workspace)
        session_id = "sess_" + uuid.uuid4().hex
        await store.create_session(session_id, str(workspace), mode)
        return self.registry.add_live(session_id, workspace, store, mode)

    async def find(self, session_id: str, workspace: Path) -> StoredSession:
        """A stored session of ``workspace`` to load (unknown: SessionNotFound)."""
        store, record = await self.registry.find_stored(session_id, workspace)
        waiting = await store.waiting_turn(record.id)
        # a turn another live daemon runs is shown as it stands there, neither asked nor resumed here
        elsewhere = await store.turn_elsewhere(record.id) if waiting is None else None
        return StoredSession(store, record, waiting, elsewhere)

    async def locate(self, session_id: str, places: list[Path]) -> tuple[HistoryStore, Path]:
        """A session's store and workspace: live here, else stored in one of ``places``."""
        live = self.registry.live.get(session_id)
        if live is not None:
            return live.store, live.workspace
        for workspace in places:
            store = await self.registry.store_for(workspace)
            if await store.get_session(session_id) is not None:
                return store, workspace
        where = " or ".join(str(p) for p in places)
        raise SessionGone(
            f"unknown session {session_id!r}: not live in this daemon and not stored in workspace "
            f"{where}; pass the workspace it belongs to as cwd"
        )

    async def stop_live(self, session_id: str) -> AgentSession | None:
        """End a live session (cancelling its turn and waiting for it); it, if it was live."""
        session = self.registry.live.get(session_id)
        if session is None:
            return None
        if session.turn is not None:
            from .queue import stop_queue  # the prompts queued behind it answer `cancelled`

            stop_queue(self.registry, session, keep_rows=False)
            session.turn.cancel()
            await session.turn.done.wait()
        self.registry.end_live(session.id)
        return session

    async def rewind(self, store: HistoryStore, session_id: str, workspace: Path, **how: Any) -> RewindOutcome:
        """A rewind refused while the session's turn runs here; a live session's conversation
        is read again afterwards (the model sees it as it now stands)."""
        from .rewind import RewindBusy

        live = self.registry.live.get(session_id)
        if live is not None and live.turn is not None:
            raise RewindBusy(f"session {session_id} is running a turn; cancel it (session/cancel) or wait for its end")
        outcome = await super().rewind(store, session_id, workspace, **how)
        if outcome.done and live is not None and live.turn is None:
            await self._reload(live)
            for path, digest in outcome.digests.items():
                live.known_files.learn(str(workspace), path, digest)
        return outcome

    async def _reload(self, live: LiveSession) -> None:
        """Read the live session's conversation again from the store (as a rewind left it)."""
        from ..agent.tokens import ContextEstimate
        from .registry import model_view, stored_ledger

        stored = await live.store.load_messages(live.id)
        views: list[MessageView] = [(m.role, m.json_body(), m.status) for m in stored]
        live.messages = model_view(views)
        live.ledger = stored_ledger(live.sandbox, views)  # reads of rewound turns are forgotten
        live.context, live.view_size = ContextEstimate(), ContextEstimate()
        live.rewind_seen, live.written_seen = await self._marks(live)

    @staticmethod
    async def _marks(live: AgentSession) -> tuple[int, int | None]:
        from ..store.checkpoints import latest_marks

        return await latest_marks(live.store, live.id)

    async def sync_rewinds(self, live: LiveSession) -> None:
        """Before a turn: what another process wrote to the session since the live conversation
        was read or its last turn here ended (`tether sessions rewind` from a shell, a second
        daemon's turn, `delete` and `restore --keep-id` of a scrubbed dump) is taken in, so the
        model sees the conversation as it now stands. One query per prompt (the latest rewind,
        the newest message's row id); the conversation is read again only when either is not
        what this daemon last saw or left (or, the first time a session that has rewinds is
        prompted here, once). The prompt handler asks only when the store's `data_version` says
        another connection wrote since the session's last check."""
        if live.read_while_child_ran:  # a sub-agent's turn went on after it was read (refused prompts until it ended)
            live.read_while_child_ran = False
            await self._reload(live)
            return
        last, newest = await self._marks(live)
        written = live.written_seen is not None and newest != live.written_seen
        if written or last != (live.rewind_seen if live.rewind_seen is not None else 0):
            await self._reload(live)
        live.rewind_seen, live.written_seen = last, None  # known again when this turn ends

    async def delete(self, session_id: str, default: Path) -> None:
        """Delete a session, live here or stored in ``default`` (unknown: SessionNotFound)."""
        session = await self.stop_live(session_id)
        if session is not None:
            store = session.store
        else:
            store, _record = await self.registry.find_stored(session_id, default)
        await self.delete_stored(store, session_id)
