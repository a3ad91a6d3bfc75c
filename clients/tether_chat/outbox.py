"""Messages sent while a turn runs: queued by the daemon (SPEC §3.37), or steered into the turn.

Owns: the chat's unanswered prompts in send order, which runs now, matching the daemon's
queue to them, showing a queued message when its turn begins, `/dequeue` and `/steer`
(docs/decisions/0014-clients.md). Must not: hold a message back itself (the daemon queues),
or send two prompts of one session at once other than as the daemon's queue allows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .complete import attachments
from .wire import DaemonError, JsonObject

if TYPE_CHECKING:
    from tether_client import PromptTurn

    from .app import ChatApp
    from .render import Slot


class Pending:
    """One sent prompt (or steered message) until its answer."""

    def __init__(self, text: str, files: list[JsonObject], *, steer: bool = False) -> None:
        self.text = text
        self.files = files
        self.steer = steer
        self.turn: PromptTurn | None = None
        self.queue_id: str | None = None
        self.started = False
        self.shown = False
        self.immediate = False  # sent when nothing ran: never in the daemon's queue
        self.withdrawn = False
        self.end: Slot | None = None  # its end line's place, when the next turn began first


class Outbox:
    def __init__(self, chat: ChatApp) -> None:
        self.chat = chat
        self.sent: list[Pending] = []  # prompts, oldest first, until answered
        self.steering: list[Pending] = []  # steered messages that have not landed
        self.queue: list[JsonObject] = []  # the daemon's queue as last shown
        self._seen: set[str] = set()

    @property
    def running(self) -> Pending | None:
        return next((p for p in self.sent if p.started), None)

    def waiting(self) -> list[Pending]:
        return [p for p in self.sent if not p.started and not p.withdrawn]

    # sending

    def send(self, text: str, *, shown: bool = False) -> None:
        """A prompt: it runs now when nothing does, else the daemon queues it (``shown``: the
        message is on the screen already, held back by a resumed turn)."""
        pending = Pending(text, attachments(text, self.chat.workspace))
        pending.shown = shown
        pending.immediate = not self.sent
        self.sent.append(pending)
        pending.turn = self.chat.daemon.prompt(self._blocks(pending))
        if pending.immediate:
            self.begin(pending)
        self.chat.spawn(self.answered(pending))

    def steer(self, text: str) -> None:
        """Into the running turn (shown where it lands, from the daemon's `user_message_chunk`)."""
        pending = Pending(text, attachments(text, self.chat.workspace), steer=True)
        self.steering.append(pending)
        pending.turn = self.chat.daemon.prompt(self._blocks(pending), steer=True)
        self.chat.spawn(self._steered(pending))

    @staticmethod
    def _blocks(pending: Pending) -> list[JsonObject]:
        return [{"type": "text", "text": pending.text}, *pending.files]

    def begin(self, pending: Pending) -> None:
        """Its turn begins: the message in the transcript, after the previous turn's end line."""
        before = self.running
        if before is not None and before is not pending and before.end is None:
            self.chat.transcript.flush()
            before.end = self.chat.transcript.reserve()
        pending.started = True
        if not pending.shown:
            pending.shown = True
            self.chat.transcript.user(pending.text)
            for block in pending.files:
                self.chat.transcript.attached(str(block["resource"]["uri"]).rpartition("/")[2])
        self.chat.turn = pending.turn

    def done(self, pending: Pending) -> None:
        """Its answer came (its end line is written): the next one waiting, if it has no
        queue id (it never waited: the daemon had ended the turn before it came), runs."""
        if pending in self.sent:
            self.sent.remove(pending)
        nxt = self.waiting()
        if not pending.withdrawn and nxt and nxt[0].queue_id is None and self.running is None:
            self.begin(nxt[0])
        running = self.running
        self.chat.turn = running.turn if running else None

    async def answered(self, pending: Pending) -> None:
        """A sent prompt's answer: its turn's end line (or that it was withdrawn)."""
        assert pending.turn is not None
        try:
            await self.chat.daemon.wait(pending.turn)
            stop = pending.turn.stop_reason or "end_turn"
            if not pending.started and stop == "cancelled":
                self._say(f"[withdrawn: {pending.text.splitlines()[0][:60]!r}]")
            else:
                if not pending.started:  # it ran without waiting in the queue
                    self.begin(pending)
                report = await self.chat.daemon.report(pending.turn.turn_id)
                self.chat.transcript.end_line(stop, report, pending.end)
        except DaemonError as exc:
            if exc.code == -32010:  # a turn the daemon resumed is running: wait for its end
                self._hold(pending)
            else:
                self.chat.transcript.notice(f"[error {exc.code}: {exc.message}]")
        except (ConnectionError, OSError) as exc:
            self.chat.gone(str(exc))
        finally:
            if pending.end is not None and pending.end.text is None:
                pending.end.text = ""
            self.done(pending)
            self.chat.note = ""
            if self.running is None:
                self.chat.transcript.flush()
            self.chat.refresh()
            self.chat.next_held()

    def _hold(self, pending: Pending) -> None:
        text = pending.text  # answers come in the order sent: held in that order
        self.chat.queue.append(text)
        if pending.started:
            self.chat.shown.add(id(text))
        if not self.chat.waiting_resumed_turn:
            self.chat.waiting_resumed_turn = True
            self.chat.transcript.notice("[a turn is still running; your message is queued]")

    # the daemon's queue

    def on_queue(self, queue: list[JsonObject]) -> None:
        self.queue = [q for q in queue if isinstance(q, dict)]
        ids = [str(q.get("queueId")) for q in self.queue]
        fresh = [i for i in ids if i not in self._seen]
        self._seen.update(fresh)
        for pending in self.sent:
            if fresh and pending.queue_id is None and not pending.started and not pending.immediate:
                pending.queue_id = fresh.pop(0)
        for pending in self.waiting():
            if pending.queue_id is not None and pending.queue_id not in ids:
                self.begin(pending)  # it left the queue, not withdrawn: its turn began

    def queue_lines(self) -> list[str]:
        lines = [f"queued {n}: {str(q.get('preview', ''))[:66]}" for n, q in enumerate(self.queue, 1)]
        if lines:
            lines.append("  /dequeue withdraws the last queued message")
        lines += [f"steering: {p.text.splitlines()[0][:66]} (lands after this step)" for p in self.steering]
        return lines

    def withdraw_all(self) -> None:
        """Before `session/cancel` with `cancelQueued`: every waiting prompt will answer `cancelled`."""
        for pending in self.waiting():
            pending.withdrawn = True

    def dequeue(self) -> None:
        last = next((p for p in reversed(self.waiting()) if p.queue_id is not None), None)
        if last is None:
            self._say("[nothing is queued to withdraw]")
            return
        last.withdrawn = True
        self.chat.spawn(self._dequeue(last))

    async def _dequeue(self, pending: Pending) -> None:
        assert pending.queue_id is not None
        try:
            await self.chat.daemon.dequeue(pending.queue_id)
        except DaemonError:
            pending.withdrawn = False  # it started meanwhile
            self._say(f"[too late to withdraw {_short(pending.text)}: its turn began]")
            self.chat.refresh()

    def _say(self, text: str) -> None:
        """A line now, without closing the message streaming meanwhile (not cut in two)."""
        self.chat.transcript.emit(self.chat.paint.style(text, "2"))

    async def _steered(self, pending: Pending) -> None:
        assert pending.turn is not None
        try:
            await self.chat.daemon.wait(pending.turn)
        except DaemonError as exc:
            self.chat.transcript.notice(f"[steer: error {exc.code}: {exc.message}]")
        except (ConnectionError, OSError) as exc:
            self.chat.gone(str(exc))
        finally:
            if pending in self.steering:
                self.steering.remove(pending)
        outcome: Any = pending.turn.steer_outcome
        if pending.turn.stop_reason == "cancelled":
            self.chat.transcript.notice(f"[not steered in: {_short(pending.text)} (the turn was cancelled)]")
        elif isinstance(outcome, dict) and outcome.get("landed") is False:
            self.chat.transcript.notice(
                f"[{_short(pending.text)} came after the turn's last step: it ran as a turn of its own]"
            )
            report = await self.chat.daemon.report(pending.turn.turn_id)
            self.chat.transcript.end_line(pending.turn.stop_reason or "end_turn", report)
        self.chat.refresh()


def _short(text: str) -> str:
    line = text.splitlines()[0] if text else ""
    return repr(line if len(line) <= 40 else line[:39] + "…")
