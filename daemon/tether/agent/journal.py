"""A turn's journal: what of it is committed, what is pending, and crash-safety.

Owns: every write a turn makes to the history store, committed at step boundaries, the
model's view it extends, the step's and calls' stages, and resuming a turn left waiting for
approval (docs/decisions/0011-agent.md).
Must not: stream, run tools, ask the user or report to the client.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

import tether_protocol
from tether_protocol import PendingApprovals, RunReport
from tether_protocol.conversation import (
    CompactionSummary,
    Message,
    ToolResultMessage,
    message_to_json,
)

from ..store import MessageRecord
from ..store.records import ChangeSet
from .history import MISSING
from .state import CallOutcome, PendingCall, StepState
from .tokens import ContextEstimate

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .session import AgentSession

# Message statuses the model sees again on later steps: what it said before a cancel
# stays part of the conversation; broken and failed output does not.
MODEL_VISIBLE = frozenset({"complete", "cancelled", "interrupted"})


class StepStage(enum.Enum):
    """Where the open step is; what a cancel, an error or a crash leaves of it."""

    STREAMING = "streaming"  # the model's reply is arriving: at most a partial is stored
    RUNNING = "running"  # its calls run: nothing of the step is stored yet
    # its assistant message and finished results are stored and the calls left are
    # pending in the store: a new daemon resumes the step here
    CHECKPOINTED = "checkpointed"


class CallStage(enum.Enum):
    WAITING = "waiting"  # not run yet
    STARTED = "started"  # approved and changing things (recorded in a checkpointed step)
    FINISHED = "finished"  # its result is held, not stored yet
    COMMITTED = "committed"  # its result is stored


@dataclass(slots=True)
class _Call:
    stage: CallStage = CallStage.WAITING
    started: bool = False  # recorded as started: may have run, never run again unasked
    result: ToolResultMessage | None = None


@dataclass(slots=True)
class Resumed:
    """The waiting step a stopped daemon left, reopened."""

    step: StepState
    calls: list[PendingCall]
    started: set[str]  # calls that had started: they may have run


class TurnJournal:
    def __init__(
        self, session: AgentSession, turn_id: str, idempotency_key: str | None = None, prompt_digest: str = ""
    ) -> None:
        self.session = session
        self.start(turn_id, idempotency_key, prompt_digest)

    def start(self, turn_id: str, idempotency_key: str | None = None, prompt_digest: str = "") -> None:
        """A turn of the session begins: the journal is its (a session's turns share one), and
        nothing of the turn before is held (an open step a failure left, its calls, its partial)."""
        self.turn_id = turn_id
        self.idempotency_key = idempotency_key  # stored with the prompt, in its transaction
        self.prompt_digest = prompt_digest  # (with the key)
        self.step: StepState | None = None  # the open step
        self.stage: StepStage | None = None
        self._calls: dict[str, _Call] = {}
        self._partial_saved = False
        self._changes: dict[str, ChangeSet] = {}  # call id -> the files it changed, stored with its result

    # ---- the turn ------------------------------------------------------------------

    async def begin(self, user: Message, *, blocked: bool) -> None:
        """Store the user message (its blocks as the client sent them, screened); a
        blocked prompt is kept but never sent to the model."""
        record = MessageRecord.of(user, "error" if blocked else "complete")
        if self.idempotency_key is None:
            await self.session.store.begin_turn(self.session.id, self.turn_id, record)
        else:
            from ..store.prompt_keys import begin_keyed_turn

            await begin_keyed_turn(
                self.session.store, self.session.id, self.turn_id, record, self.idempotency_key, self.prompt_digest
            )
        if not blocked:
            self._extend((user,), (record,))

    async def steer(self, user: Message, *, blocked: bool, after_step: int) -> int:
        """A message steered into the turn, at a step boundary (no step open): stored after
        the last step's results (marked `steered`, so a replay shows it as such), in the
        model's view from the next request; its seq."""
        assert self.step is None, "a steered message lands between steps only"
        body = {**message_to_json(user), "steered": {"afterStep": after_step}}
        record = MessageRecord("user", body, "error" if blocked else "complete")
        (seq,) = await self.session.store.append_messages(self.session.id, self.turn_id, [record])
        if not blocked:
            self._extend((user,), (record,))
        return seq

    def _extend(self, bodies: Sequence[Message], records: Sequence[MessageRecord]) -> None:
        """The model's view extended by messages just stored, its running size with them."""
        messages = self.session.messages
        start = len(messages)
        messages.extend(bodies)
        self.session.view_size.stored(start, bodies, [record.size for record in records])

    async def set_title(self, title: str) -> None:
        self.session.title = title
        await self.session.store.update_session(self.session.id, title=title)

    async def record_compaction(self, summary: CompactionSummary) -> None:
        records = [MessageRecord.of(summary)]
        await self.session.store.append_messages(self.session.id, self.turn_id, records)

    async def finish(self, status: str, stop_reason: str, error: str | None, report: RunReport) -> None:
        await self.session.store.finish_turn(
            self.turn_id, status, None if status == "error" else stop_reason, error=error, report=report
        )

    # ---- the open step -------------------------------------------------------------

    def open(self, step: StepState) -> None:
        self.step, self.stage, self._calls = step, StepStage.STREAMING, {}

    def calls_assembled(self) -> None:
        if self.stage is StepStage.STREAMING:
            self.stage = StepStage.RUNNING

    def record(self, outcome: CallOutcome) -> None:
        """A call of the open step finished (or was refused): its result is held."""
        call = self._calls.setdefault(outcome.call.call_id, _Call())
        call.stage, call.result = CallStage.FINISHED, outcome.message()
        if outcome.result.file_changes:
            rows = tuple((c.path, c.before, c.after, c.note) for c in outcome.result.file_changes)
            self._changes[outcome.call.call_id] = ChangeSet(outcome.call.call_id, rows, outcome.result.file_blobs)

    def stage_of(self, call_id: str) -> CallStage:
        call = self._calls.get(call_id)
        return CallStage.WAITING if call is None else call.stage

    async def save_partial(self, step: StepState) -> None:
        """What the step streamed so far (time-based, never per event): a killed daemon keeps it."""
        self._partial_saved = True
        await self.session.store.save_partial(self.turn_id, step.partial())

    async def commit_step(self) -> None:
        """The step ended: commit what of it is not committed yet (and, if it was
        checkpointed, clear its calls waiting, in the same transaction)."""
        step = self.step
        assert step is not None, "no open step"
        checkpointed = self.stage is StepStage.CHECKPOINTED
        bodies: list[Message] = [] if checkpointed else [step.assistant()]
        for call_id in step.calls:
            call = self._calls[call_id]
            if call.stage is not CallStage.COMMITTED:
                assert call.result is not None, f"call {call_id} has no result"
                bodies.append(call.result)
        await self._commit(bodies, clear_pending=checkpointed)

    async def set_aside(self, step: StepState) -> None:
        """A reply that broke off after output was shown: kept `incomplete`, out of the
        model's view; the step is streamed again."""
        await self._commit([step.partial()], status="incomplete")

    def unrun_calls(self) -> list[str]:
        """The open step's calls that have no result (the client saw them start)."""
        if self.step is None:
            return []
        return [c.call_id for c in self.step.finish_calls() if self.stage_of(c.call_id) in _NO_RESULT]

    async def close(self, status: str) -> None:
        """Commit the step a cancel or error interrupted, keeping tool calls paired."""
        step, checkpointed = self.step, self.stage is StepStage.CHECKPOINTED
        self.step = self.stage = None
        if step is None:
            return
        assistant = step.assistant()
        bodies: list[Message] = [] if checkpointed else [assistant]
        for call in step.calls.values():
            held = self._calls.get(call.call_id)
            if held is not None and held.stage is CallStage.COMMITTED:
                continue
            bodies.append(held.result if held is not None and held.result is not None else _not_run(call, status))
        if checkpointed:
            await self._commit(bodies, status, clear_pending=True)
        elif assistant.text or assistant.tool_calls or assistant.thinking is not None:
            await self._commit(bodies, status)

    async def _commit(self, bodies: list[Message], status: str = "complete", *, clear_pending: bool = False) -> None:
        """Commit a step's messages; ``clear_pending``: and, in the same transaction, the
        checkpoint of its calls waiting for approval (they have all run now)."""
        # The step stops being open before the write: the store finishes a write even
        # when its caller is cancelled, so a cancel here must not commit the step twice.
        self.step = self.stage = None
        self._calls = {}
        messages = self.session.messages
        start = len(messages)
        if status in MODEL_VISIBLE:
            messages.extend(bodies)
        records = self._records(bodies, status)
        store = self.session.store
        if clear_pending:
            await store.commit_step(self.session.id, self.turn_id, records, None)
            self._partial_saved = False  # cleared with it
        else:
            await store.append_messages(self.session.id, self.turn_id, records)
        if status in MODEL_VISIBLE and self.session.messages is messages:  # counted once stored
            self.session.view_size.stored(start, bodies, [record.size for record in records])
        if self._partial_saved:
            self._partial_saved = False
            await store.save_partial(self.turn_id, None)

    # ---- crash-safety --------------------------------------------------------------

    async def checkpoint(self) -> None:
        """Before waiting for the user: commit the step so far and what is left to run, so
        a new daemon can ask again and resume here if this one dies (restart-safe approvals)."""
        step = self.step
        if step is None:
            return
        bodies: list[Message] = [] if self.stage is StepStage.CHECKPOINTED else [step.assistant()]
        for call_id in step.calls:
            call = self._calls.get(call_id)
            if call is not None and call.stage is CallStage.FINISHED and call.result is not None:
                bodies.append(call.result)
                call.stage = CallStage.COMMITTED
        # Marked committed before the write, as in _commit: the store finishes a write even
        # when its caller is cancelled, so a cancel here must not commit them twice. The
        # step so far and what is left of it go in one transaction (the streamed partial
        # they supersede cleared with them).
        self.stage = StepStage.CHECKPOINTED
        messages = self.session.messages
        start = len(messages)
        messages.extend(bodies)
        self._partial_saved = False
        records = self._records(bodies)
        await self.session.store.commit_step(self.session.id, self.turn_id, records, self._pending())
        if self.session.messages is messages:
            self.session.view_size.stored(start, bodies, [record.size for record in records])

    def _records(self, bodies: list[Message], status: str = "complete") -> list[MessageRecord]:
        """The records to store; a tool result's with the files its call changed."""
        return [
            MessageRecord.of(b, status, self._changes_of(b.tool_call_id) if isinstance(b, ToolResultMessage) else None)
            for b in bodies
        ]

    def _changes_of(self, call_id: str) -> ChangeSet | None:
        found = self._changes.pop(call_id, None)
        unfinished = self.session.known_files.unfinished(call_id)  # cancelled while it ran
        if found is None and unfinished is not None:
            rows = tuple((c.path, c.before, c.after, c.note) for c in unfinished[0])
            found = ChangeSet(call_id, rows, unfinished[1])
        return found

    async def mark_started(self, call_id: str) -> None:
        """An approved call of a checkpointed step is about to change things: record that,
        so a daemon that resumes the turn after a crash does not run it a second time."""
        if self.step is None or self.stage is not StepStage.CHECKPOINTED:
            return  # nothing recorded to resume: a crash interrupts the whole step
        call = self._calls.setdefault(call_id, _Call())
        call.stage, call.started = CallStage.STARTED, True
        await self.session.store.set_pending(self.turn_id, self._pending())

    def _pending(self) -> PendingApprovals:
        """The checkpoint of the step's calls still to run: those whose results are not
        committed, a call that was approved and started marked ``started``."""
        assert self.step is not None
        calls = []
        for c in self.step.calls.values():
            held = self._calls.get(c.call_id)
            if held is not None and held.stage is CallStage.COMMITTED:
                continue
            started = held is not None and held.started
            calls.append(tether_protocol.PendingCall(c.call_id, c.name, c.arguments or {}, started))
        return PendingApprovals(step=self.step.index, calls=calls)

    def resume(self, pending: PendingApprovals) -> Resumed:
        """Reopen the step a previous daemon checkpointed (its assistant message is
        stored) with its calls still to run, those that had started marked so."""
        calls = [PendingCall(c.id, c.name, arguments=c.arguments, ended=True) for c in pending.calls]
        step = StepState(pending.step)
        step.calls = {c.call_id: c for c in calls}
        self.step, self.stage, self._calls = step, StepStage.CHECKPOINTED, {}
        started = {c.id for c in pending.calls if c.started}
        for call_id in started:
            self._calls[call_id] = _Call(CallStage.STARTED, started=True)
        return Resumed(step, calls, started)

    def drop_stand_ins(self, call_ids: set[str]) -> None:
        """The view read back from the store paired each waiting call with a "result
        missing" stand-in; its real result comes now (else the stand-in would stay, and
        the real result be dropped as a second answer to the call)."""
        messages = self.session.messages
        kept = [
            m
            for m in messages
            if not (isinstance(m, ToolResultMessage) and m.tool_call_id in call_ids and m.content == MISSING)
        ]
        if len(kept) != len(messages):
            self.session.messages = kept
            self.session.view_size = ContextEstimate()  # it counted the stand-ins


_NO_RESULT = frozenset({CallStage.WAITING, CallStage.STARTED})


def _not_run(call: PendingCall, status: str) -> ToolResultMessage:
    return ToolResultMessage(call.call_id, call.name, not_run_text(status), is_error=True)


def not_run_text(status: str) -> str:
    return f"not run: the turn was {status} before this tool finished"
