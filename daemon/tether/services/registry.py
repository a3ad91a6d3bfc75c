"""Live sessions and the per-workspace stores behind them.

Owns: one `HistoryStore` per workspace (lazily, once), the map of live sessions, turning a stored
session live again, and one sandbox and watch per workspace while it has live sessions.
Must not: speak the protocol (`sessions.py` does), run turns, or keep a left workspace's watch.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from tether_protocol import SessionNotFound, WorkspaceInvalid

from ..store import (
    HistoryStore,
    MessageRecord,
    MessageView,
    SessionRecord,
    database_path,
)
from ..tools.ledger import ContentLedger
from ..tools.sandbox import WorkspaceSandbox
from .config_options import stored_model, stored_reasoning
from .live_session import LiveSession
from .watcher import WorkspaceWatcher

if TYPE_CHECKING:  # a stored session's model view is built when one is loaded
    from tether_protocol.conversation import Message

    from ..config import Settings


def credential_stores(settings: Settings) -> tuple[str, ...]:
    """The credential stores hidden from commands and the file tools (sandbox/credential_stores.py),
    after the user's `allow_read` and every `deny_read`."""
    from ..sandbox.credential_stores import read_limits

    limits = read_limits(os.environ, (*settings.deny_read, *settings.workspace_deny_read), settings.allow_read)
    return (*(store.path for store in limits.hidden), *limits.filtered)


def private_paths(home: Path | None) -> tuple[str, ...]:
    """Tether's user config, its history, its runtime directories (the shared daemon's
    socket), MCP servers' own directories and the class code cache: what neither the tools nor commands read or
    reach. The config's directory when it is Tether's own (`.../tether`), else only the
    file (a TETHER_CONFIG in `~` must not hide, or fail to hide, all of `~`)."""
    from ..class_code_cache import cache_dirs
    from ..config import user_config_path
    from ..config.layers import servers_dir
    from ..shared.proxy import runtime_dirs
    from ..store.paths import tether_home

    config = user_config_path()[0]
    return (
        str(config.parent if config.parent.name == "tether" else config),
        str(tether_home(home)),
        str(servers_dir()),  # MCP servers' own directories (their HOME: a planted .npmrc would run there)
        *runtime_dirs(os.environ),
        *cache_dirs(),  # the class code cache: code from there runs unsandboxed at the next start
    )


def check_workspace(cwd: str) -> Path:
    shown = cwd if len(cwd) <= 200 else f"{cwd[:200]}…"
    if "\0" in cwd:
        raise WorkspaceInvalid(f"cwd {shown!r} contains a NUL byte; send an absolute path to a directory")
    path = Path(cwd)
    if not path.is_absolute():
        raise WorkspaceInvalid(f"cwd {shown!r} must be an absolute path to a directory")
    try:
        is_dir = path.is_dir()
    except OSError as exc:  # ENAMETOOLONG, ELOOP, EACCES on a parent
        raise WorkspaceInvalid(
            f"cwd {shown!r} cannot be used ({exc.strerror or exc}); send an absolute path to a directory"
        ) from None
    if not is_dir:
        raise WorkspaceInvalid(f"cwd {shown!r} does not exist or is not a directory")
    return Path(os.path.realpath(path))


# Starts a background task: (name, async function, *args) -> whether it was started.
Spawn = Callable[..., bool]
# Returns when a workspace's watch may start (the client idle, its answers written): True,
# or False when the daemon stops first (no watch then).
Idle = Callable[[], Awaitable[bool]]


async def _nothing_to_wait_for() -> bool:
    return True


class SessionRegistry:
    def __init__(
        self, home: Path | None, spawn: Spawn, idle: Idle = _nothing_to_wait_for, stores: tuple[str, ...] = ()
    ) -> None:
        self._home = home
        self._credential_stores = stores  # the file tools skip them (user settings at start)
        self._spawn = spawn
        self._idle = idle
        self._stores: dict[Path, HistoryStore] = {}
        # Requests arrive concurrently: without this, two first requests for a workspace
        # would each open its database and the loser's connection thread would keep the
        # process alive after exit.
        self._opening = anyio.Lock()
        # One sandbox per workspace, shared by its sessions (and kept current by the watcher).
        self._sandboxes: dict[Path, WorkspaceSandbox] = {}
        self.watchers: dict[Path, WorkspaceWatcher] = {}
        self.live: dict[str, LiveSession] = {}

    def sandbox_for(self, workspace: Path) -> WorkspaceSandbox:
        sandbox = self._sandboxes.get(workspace)
        if sandbox is None:
            sandbox = self._sandboxes[workspace] = WorkspaceSandbox(
                workspace, private_paths(self._home), self._credential_stores
            )
            watcher = self.watchers[workspace] = WorkspaceWatcher(sandbox)
            self._spawn(f"watcher {workspace}", self._watch, watcher)
        return sandbox

    async def _watch(self, watcher: WorkspaceWatcher) -> None:
        """Run ``watcher`` once the client is idle: setting up the watch imports watchfiles
        and walks the tree, not while `session/new` or the first prompt waits for it."""
        if await self._idle():
            await watcher.run()

    async def store_for(self, workspace: Path) -> HistoryStore:
        store = self._stores.get(workspace)
        if store is not None:
            return store
        async with self._opening:
            opened = self._stores.get(workspace)
            if opened is None:
                opened = self._stores[workspace] = await self._open(workspace)
        return opened

    async def _open(self, workspace: Path) -> HistoryStore:
        with anyio.CancelScope(shield=True):  # a half-opened connection would leak too
            store = await HistoryStore.open(database_path(workspace, self._home), spawn=self._spawn)
        return store

    def add_live(self, session_id: str, workspace: Path, store: HistoryStore, mode: str) -> LiveSession:
        """A new session (just stored) made live."""
        session = LiveSession(session_id, workspace, store, self.sandbox_for(workspace), mode)
        self.live[session_id] = session
        return session

    def get_live(self, session_id: str) -> LiveSession:
        session = self.live.get(session_id)
        if session is None:
            raise SessionNotFound(
                f"unknown session {session_id!r}: create one with session/new, or load a "
                f"stored one with session/load (or session/resume) first"
            )
        return session

    async def find_stored(self, session_id: str, workspace: Path) -> tuple[HistoryStore, SessionRecord]:
        self.check_not_live_elsewhere(session_id, workspace)
        store = await self.store_for(workspace)
        record = await store.get_session(session_id)
        if record is None:
            raise SessionNotFound(
                f"unknown session {session_id!r} in workspace {workspace}; "
                f"session/list shows the sessions stored for a workspace"
            )
        return store, record

    def check_not_live_elsewhere(self, session_id: str, workspace: Path) -> None:
        """Each workspace has its own store, so two may hold one id (a snapshot restored
        with keepId): the one live here is never replaced by, nor shown as, the other's."""
        live = self.live.get(session_id)
        if live is not None and live.workspace != workspace:
            raise WorkspaceInvalid(
                f"session {session_id!r} is open in workspace {live.workspace}, not {workspace}: "
                f"close it (session/close) before opening the session of that id stored in {workspace}"
            )

    async def revive(self, session_id: str, workspace: Path) -> tuple[LiveSession, list[MessageRecord]]:
        """Make a stored session live again; returns it and its stored messages."""
        store, record = await self.find_stored(session_id, workspace)
        stored = await store.load_messages(session_id)
        views: list[MessageView] = [(m.role, m.json_body(), m.status) for m in stored]
        session = self.make_live(store, record, workspace, views)
        if session.turn is None:  # (one running a turn is kept as it is)
            await self.note_stored(session)
        return session, stored

    @staticmethod
    async def note_stored(session: LiveSession) -> None:
        """Where the session's history stands (its newest message's row id) as it was just read or
        as a turn here left it: its next prompt's check reads in what another process wrote since
        (sessions_service.py)."""
        from ..store.checkpoints import latest_marks

        _rewind, session.written_seen = await latest_marks(session.store, session.id)

    def make_live(
        self, store: HistoryStore, record: SessionRecord, workspace: Path, stored: Sequence[MessageView]
    ) -> LiveSession:
        """The live session of a stored one whose messages (``stored``) have been read;
        a live session running a turn stays as it is (an idle one is made again, keeping
        what is its own beyond its history: its MCP servers, the commands they offer, the
        connections that see it)."""
        self.check_not_live_elsewhere(record.id, workspace)
        existing = self.live.get(record.id)
        if existing is not None and existing.turn is not None:
            return existing
        session_id = record.id
        session = LiveSession(
            session_id,
            workspace,
            store,
            self.sandbox_for(workspace),
            record.mode,
            title=record.title,
            model=stored_model(record.metadata),
            reasoning=stored_reasoning(record.metadata),
            messages=model_view(stored),
        )
        if existing is not None:
            session.prompt_commands, session.audience = existing.prompt_commands, existing.audience
            session.mcp_servers, session.mcp_told = existing.mcp_servers, existing.mcp_told
        session.ledger = stored_ledger(session.sandbox, stored)  # what the model had read, before a restart
        session.read_while_child_ran = self._child_running(session_id)
        self.live[session_id] = session
        return session

    def _child_running(self, session_id: str) -> bool:
        """Whether ``session_id`` is a sub-agent's session whose turn runs now (under a live parent's call)."""
        return any(
            child.child_session_id == session_id
            for parent in self.live.values()
            if parent.turn is not None
            for child in parent.turn.children
        )

    @property
    def open_stores(self) -> int:
        return len(self._stores)

    def end_live(self, session_id: str) -> None:
        """The session is no longer live; its workspace's watch stops with the last one
        (a sandbox is made again, and watched, when a session there is live again)."""
        session = self.live.pop(session_id, None)
        if session is None or any(s.workspace == session.workspace for s in self.live.values()):
            return
        watcher = self.watchers.pop(session.workspace, None)
        if watcher is not None:
            watcher.stop()
        self._sandboxes.pop(session.workspace, None)

    def stop_watchers(self) -> None:
        for watcher in self.watchers.values():
            watcher.stop()

    async def close_all(self) -> None:
        self.stop_watchers()
        for store in self._stores.values():
            await store.close()
        self._stores.clear()


def stored_ledger(sandbox: WorkspaceSandbox, stored: Sequence[MessageView]) -> ContentLedger:
    """The read ledger of a conversation as it stands: what its tool calls taught it, in
    order. After a rewind only the remaining calls count (SPEC 5.11: a file read in a
    rewound turn must be read again before it is changed)."""
    ledger = ContentLedger(sandbox)
    for role, body, _status in stored:
        learned = body.get("ledger") if role == "tool" else None
        if learned:
            ledger.restore(learned)
    return ledger


class StoredTail:
    """What a session being loaded keeps of its stored messages, read a page at a time:
    what the model will see (``model_view``: from the last compaction summary on, with
    the visible messages it kept before it) and, of the earlier messages, only what
    their tool results taught the ledger. Told where the last summary lies (``expect``),
    it lets the messages before it go as they are read: a 50,000-message session is not
    held whole while it is replayed."""

    def __init__(self) -> None:
        self._views: list[MessageView] = []
        self._learned: list[MessageView] = []  # ledger-only stand-ins of dropped tool results
        self._dropped = 0  # messages read and let go (or kept as stand-ins)
        self._summary: tuple[int, int] | None = None  # the last summary's (position, kept), when known

    def expect(self, summary: tuple[int, object] | None) -> None:
        """The session's last compaction summary: how many messages come before it, and
        its ``kept`` (``store.last_summary``)."""
        if summary is not None:
            position, kept = summary
            self._summary = (position, kept if isinstance(kept, int) and kept >= 0 else 0)
            self._let_go()

    def extend(self, page: Sequence[MessageView]) -> None:
        start = len(self._views)
        self._views.extend(page)
        for index in range(len(self._views) - 1, start - 1, -1):
            role, body, _status = self._views[index]
            if role == "user" and "compaction" in body:
                self._drop_before(index, body["compaction"].get("kept"))
                return
        self._let_go()

    def _let_go(self) -> None:
        """Drop what the expected summary will drop, as if it came next: the `kept`
        visible messages it may keep stay (and whatever follows them)."""
        if self._summary is not None:
            position, kept = self._summary
            self._drop_before(min(len(self._views), position - self._dropped), kept)

    def _drop_before(self, summary: int, kept: object) -> None:
        from ..agent.history import nothing_said
        from ..agent.journal import MODEL_VISIBLE

        wanted = kept if isinstance(kept, int) and kept >= 0 else 0
        cut = summary
        while wanted and cut > 0:  # back over the `kept` visible messages (as model_view counts them)
            cut -= 1
            role, body, status = self._views[cut]
            wanted -= status in MODEL_VISIBLE and not (role == "assistant" and nothing_said(body))
        if cut <= 0:
            return
        for role, body, _status in self._views[:cut]:
            if role == "tool" and body.get("ledger"):
                # a status the model's view leaves out: a stand-in is only for the ledger
                self._learned.append((role, {"ledger": body["ledger"]}, "incomplete"))
        del self._views[:cut]
        self._dropped += cut

    def views(self) -> list[MessageView]:
        return [*self._learned, *self._views]


def model_view(stored: Sequence[MessageView]) -> list[Message]:
    """What the model sees of a stored session (``history.stored_view``): without broken
    output (what is not model-visible, assistant messages with nothing said)."""
    from ..agent.history import nothing_said, stored_view
    from ..agent.journal import MODEL_VISIBLE

    return stored_view(
        [
            body
            for role, body, status in stored
            if status in MODEL_VISIBLE and not (role == "assistant" and nothing_said(body))
        ]
    )
