"""Prompts that arrive while a turn runs: queued in arrival order, or steered into the turn.

Owns: `PromptQueue` (one per live session): waiting prompts, the synchronous handoff to the next,
steered messages waiting for a step (their handlers: handlers/queue.py), withdrawing,
the queue's `session_info_update`, and a stopped daemon's left prompts (SPEC §3.37).
Must not: run a turn (`prompt.py` does), lose a steered message, or write rows but by `tether.store.queue`.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from tether_protocol import (
    InvalidParams,
    PromptParams,
    QueuedPrompt,
    SessionInfoUpdate,
    SteerOutcome,
    UpdateMeta,
    UpdateTetherMeta,
    UserMessageChunk,
    unstructure,
)

from ..agent.session import ActiveTurn, AgentSession, Steer
from ..agent.sink import PromptSteered
from ..rendering import SessionUpdates
from ..store import new_turn_id
from ..store import queue as stored

if TYPE_CHECKING:
    from .live_session import LiveSession
    from .ports import UpdateChannel
    from .prompt_keys import KeyedPrompt
    from .registry import SessionRegistry

PREVIEW_CHARS = 80


@dataclass(slots=True, eq=False)
class Entry:
    """A prompt waiting for its turn; `handle` is set when its turn begins (`go`)."""

    queue_id: str
    params: PromptParams
    preview: str
    queued_at: float
    steered: bool = False  # a steered message the turn ended before: it runs next (not stored)
    kept: bool = False  # withdrawn as its daemon stops: its row stays, reported as not run
    stored: bool = False  # its row is written: listed from then on (a listed prompt survives a crash)
    go: anyio.Event = field(default_factory=anyio.Event)
    handle: ActiveTurn | None = None  # None once `go` is set: withdrawn


@dataclass(slots=True, eq=False)
class SteerWait:
    """A steered message on its way into the running turn."""

    params: PromptParams
    steer: Steer | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    outcome: SteerOutcome | None = None  # landed
    entry: Entry | None = None  # not landed: queued to run next
    withdrawn: bool = False


class PromptQueue:
    """One session's queue (see the module docstring)."""

    def __init__(self, ctx: UpdateChannel, session_id: str) -> None:
        self.ctx, self.session_id = ctx, session_id
        self.entries: list[Entry] = []
        self.steering: list[SteerWait] = []
        self.sink: SessionUpdates | None = None  # the running turn's (a landed steer is shown in its stream)
        self.current: PromptParams | None = None  # the running turn's prompt
        self.keyed: dict[str, KeyedPrompt] = {}  # prompts by idempotency key (prompt_keys.py)

    # ---- queueing ------------------------------------------------------------------

    async def take_turn(self, session: AgentSession, params: PromptParams, key: str | None = None) -> ActiveTurn | None:
        """The turn for ``params``: at once when the session is free, else after the turns
        queued before it (the prompt is stored until its turn begins). None: withdrawn.
        ``key``: its idempotency key, stored with the prompt as the turn begins."""
        handle = await self._take_turn(session, params)
        keyed = self.keyed.get(key) if key is not None else None
        if handle is not None and keyed is not None:  # (a steer's key is not kept)
            handle.idempotency_key, handle.prompt_digest, keyed.began = key, keyed.digest, True
        return handle

    async def _take_turn(self, session: AgentSession, params: PromptParams) -> ActiveTurn | None:
        if session.turn is None and not self.entries:
            return self._begin(session, params)
        entry = Entry(uuid.uuid4().hex[:12], params, preview_of(params), time.time())
        self.entries.append(entry)  # its place: arrival order
        try:
            await stored.add(session.store, session.id, entry.queue_id, _blocks(params), entry.preview)
        except BaseException:
            self._abandon(session, entry)
            raise
        entry.stored = True
        if entry in self.entries:
            self.announce()
        return await self.wait_for(session, entry)

    async def wait_for(self, session: AgentSession, entry: Entry) -> ActiveTurn | None:
        try:
            await entry.go.wait()
        except BaseException:  # the request itself was dropped (its connection closed)
            self._abandon(session, entry)
            raise
        if not entry.steered and not entry.kept:
            with anyio.CancelScope(shield=True):
                await stored.remove(session.store, [entry.queue_id])
        return entry.handle

    def _abandon(self, session: AgentSession, entry: Entry) -> None:
        """A waiter that will not run its turn: out of the queue; a turn already handed to
        it goes on to the next prompt."""
        if entry in self.entries:
            self.entries.remove(entry)
            self.announce()
        elif entry.handle is not None and session.turn is entry.handle:
            session.turn = None
            entry.handle.done.set()
            self.turn_ended(session, entry.handle)

    def _begin(self, session: AgentSession, params: PromptParams) -> ActiveTurn:
        handle = ActiveTurn(new_turn_id())
        session.turn, self.current = handle, params
        return handle

    def turn_ended(self, session: AgentSession, handle: ActiveTurn) -> None:
        """Called (synchronously) right after the turn released the session: steered
        messages that did not land run next, then the queued prompts, in order."""
        self.sink = self.current = None
        missed = [w for w in self.steering if any(s is w.steer for s in handle.steers)]
        handle.steers.clear()
        for wait in reversed(missed):
            self.steering.remove(wait)
            wait.entry = Entry(uuid.uuid4().hex[:12], wait.params, preview_of(wait.params), time.time(), steered=True)
            self.entries.insert(0, wait.entry)
            wait.done.set()
        if self.entries and session.turn is None:
            entry = self.entries.pop(0)
            entry.handle = ActiveTurn(new_turn_id())
            session.turn, self.current = entry.handle, entry.params  # a cancel finds it at once
            entry.go.set()
            self.announce()

    def withdraw(self, entry: Entry) -> None:
        """Take a prompt out of the queue: its request answers `cancelled`."""
        if entry in self.entries:
            self.entries.remove(entry)
            entry.go.set()
            self.announce()

    def withdraw_all(self, session: AgentSession, *, keep_rows: bool = False) -> None:
        """`session/cancel` with `cancelQueued` (or the session closing): every queued and
        steered prompt answers `cancelled`. ``keep_rows``: the daemon is stopping, so the
        stored prompts stay, reported as not run by the next `session/load`."""
        for wait in list(self.steering):
            self._drop_steer(session, wait)
        for entry in list(self.entries):
            entry.kept = keep_rows
            self.withdraw(entry)

    def cancel_request(self, session: AgentSession, params: PromptParams) -> bool:
        """`$/cancelRequest` of a `session/prompt` that is queued or steering (True), not running."""
        for entry in self.entries:
            if entry.params is params:
                self.withdraw(entry)
                return True
        for wait in self.steering:
            if wait.params is params:
                self._drop_steer(session, wait)
                return True
        return False

    # ---- steering ------------------------------------------------------------------

    def can_steer(self, session: AgentSession) -> bool:
        turn = session.turn
        return turn is not None and not turn.cancel_requested

    async def steer(self, session: AgentSession, params: PromptParams) -> SteerWait:
        """Hand the message to the running turn and wait until it lands (or the turn ends
        first: then `entry` is its place at the head of the queue)."""
        assert session.turn is not None
        turn_id = session.turn.turn_id
        wait = SteerWait(params)

        def landed(step: int, seq: int) -> None:
            wait.outcome = SteerOutcome(True, turn_id, step, seq)
            sink = self.sink or SessionUpdates(session.id, self.ctx.connection)
            where = UpdateMeta(UpdateTetherMeta(steered=True, turn_id=turn_id, after_step=step, message_seq=seq))
            for block in params.prompt:
                sink.update(UserMessageChunk(block, where))  # v1's shape (v2 shows none of them)
            sink.emit(PromptSteered(turn_id, step, seq, tuple(wait.steer.prompt if wait.steer else ())))
            if wait in self.steering:
                self.steering.remove(wait)
            wait.done.set()

        wait.steer = Steer(_content(params), landed)
        self.steering.append(wait)
        session.turn.steers.append(wait.steer)
        await wait.done.wait()
        return wait

    def _drop_steer(self, session: AgentSession, wait: SteerWait) -> None:
        turn = session.turn
        if turn is not None and wait.steer in turn.steers:
            turn.steers.remove(wait.steer)
        if wait in self.steering:
            self.steering.remove(wait)
        wait.withdrawn = True
        wait.done.set()

    # ---- what clients see -------------------------------------------------------------

    def listed(self) -> list[QueuedPrompt]:
        return [QueuedPrompt(e.queue_id, e.preview, e.queued_at) for e in self.entries if e.stored or e.steered]

    def announce(self) -> None:
        """The queue changed: a `session_info_update` with the whole queue (`_meta.tether.queue`)."""
        sink = SessionUpdates(self.session_id, self.ctx.connection)
        sink.update(SessionInfoUpdate(meta=UpdateMeta(UpdateTetherMeta(queue=self.listed()))))


def queue_of(ctx: UpdateChannel, session: LiveSession) -> PromptQueue:
    """The session's queue, made on first use (its updates go out on ``ctx``'s connection,
    and through its audience to every window that sees the session)."""
    if session.queue is None:
        session.queue = PromptQueue(ctx, session.id)
    return session.queue


def stop_queue(registry: SessionRegistry, session: AgentSession, *, keep_rows: bool) -> None:
    """The session closes or the daemon stops: no queued prompt starts a turn any more."""
    live = registry.live.get(session.id)
    if live is not None and live.queue is not None:
        live.queue.withdraw_all(live, keep_rows=keep_rows)


def steering(params: PromptParams) -> bool:
    """`_meta.tether.steer: true` on a `session/prompt` (InvalidParams for a steer that is
    not a boolean: a "yes" silently queued would be the opposite of what was asked)."""
    tether = (params.meta or {}).get("tether")
    steer = tether.get("steer", False) if isinstance(tether, dict) else False
    if not isinstance(steer, bool):
        raise InvalidParams(
            f"invalid params for session/prompt: _meta.tether.steer must be true or false, not "
            f"{steer!r}; send true to join the running turn, or leave it out to queue the prompt"
        )
    return steer


def preview_of(params: PromptParams) -> str:
    texts = [b.get("text", "") for b in _blocks(params) if isinstance(b, dict) and b.get("type") == "text"]
    line = next((t.strip().splitlines()[0] for t in texts if t.strip()), "")
    if not line:
        line = f"({len(params.prompt)} content block{'s' if len(params.prompt) != 1 else ''})"
    return line if len(line) <= PREVIEW_CHARS else line[: PREVIEW_CHARS - 1].rstrip() + "…"


def _blocks(params: PromptParams) -> list[Any]:
    return [unstructure(block) for block in params.prompt]


def _content(params: PromptParams) -> list[Any]:
    from tether_protocol import conversation_blocks

    return list(conversation_blocks(params.prompt))


def say_not_run(ctx: UpdateChannel, session_id: str, rows: list[stored.QueuedRow]) -> None:
    """After a load's replay: the prompts a stopped daemon left queued, named; never run later."""
    if not rows:
        return
    named = "; ".join(f"{i}. {r.preview!r} (queueId {r.id})" for i, r in enumerate(rows, 1))
    sink = SessionUpdates(session_id, ctx.connection)
    sink.notice(
        f"\n[not run: {len(rows)} prompt{'s' if len(rows) != 1 else ''} queued when a Tether process stopped "
        f"never started: {named}. Send again what you still want; _tether/session/dequeue clears them]\n"
    )
    sink.flush()
