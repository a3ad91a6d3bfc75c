"""A turn as a stock LSP client sees it: the `TurnSink` of a turn started by `tether.ask`.

Owns: the turn's typed events as work-done progress (else `window/logMessage` lines), reports
at most every `REPORT_EVERY_S`, and the `TurnRecord` the transcript is written from.
Must not: build ACP JSON, decide anything about the turn, or send per delta (docs/decisions/0018).
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import TYPE_CHECKING

import anyio

from ...agent.sink import (
    Notice,
    PlanUpdated,
    StepStarted,
    TextContent,
    ToolCallPatch,
    ToolCallStarted,
    TurnEvent,
)
from ...transport.rpc import ClientRequestFailed, TetherRPC
from .transcript import Call, TurnRecord

if TYPE_CHECKING:
    from tether_protocol import JsonObject

REPORT_EVERY_S = 0.1  # at most ~10 progress reports a second, whatever the model streams
CREATE_WAIT_S = 10.0  # a client that never answers window/workDoneProgress/create gets no progress
_LINE = 120  # a progress message is one line, this long at most

# (what, token, title or message): "begin", "report" or "end" of one progress, or "log"
Op = tuple[str, str, str]


def one_line(text: str, limit: int = _LINE) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def tail(text: str, limit: int = _LINE) -> str:
    """The last line being written, ending with its newest words."""
    lines = text.strip().splitlines()
    line = " ".join(lines[-1].split()) if lines else ""
    return line if len(line) <= limit else "…" + line[-(limit - 1) :]


class LspWatch:
    """The sink of one turn; `run()` sends what it collects, `close()` ends it."""

    def __init__(self, rpc: TetherRPC, *, progress: bool, turn_id: str, prompt: str) -> None:
        self._rpc = rpc
        self._progress = progress
        self.token = f"tether/{turn_id}"
        self.record = TurnRecord(prompt)
        self._ops: deque[Op] = deque()
        self._wake = asyncio.Event()
        self._parts: list[str] = []  # the current step's text
        self._dirty = False  # text arrived since the last report
        self._closing = False
        self._closed = asyncio.Event()
        self._calls: dict[str, Call] = {}
        self._usable: set[str] = set()  # tokens the client accepted
        self._begun: set[str] = set()  # tool calls whose progress began
        self.answer = ""  # the text of the last step that said something
        self._ops.append(("begin", self.token, one_line(prompt, 60)))

    # ---- TurnSink ---------------------------------------------------------------------

    def text(self, delta: str) -> None:
        self._parts.append(delta)
        if not self._dirty:
            self._dirty = True
            self._wake.set()

    def thought(self, delta: str) -> None:
        """Reasoning is not shown to a stock client (nowhere to fold it away)."""

    def flush(self) -> None:
        self._wake.set()

    def emit(self, event: TurnEvent) -> None:
        if isinstance(event, StepStarted):
            self._end_text()
        elif isinstance(event, ToolCallStarted):
            self._started(event)
        elif isinstance(event, ToolCallPatch):
            self._patched(event)
        elif isinstance(event, Notice):
            self._end_text()
            self.record.items.append(f"\n> {one_line(event.text, 400)}\n\n")
        elif isinstance(event, PlanUpdated):
            self.record.plan = [f"- [{'x' if e.status == 'completed' else ' '}] {e.content}" for e in event.entries]
            done = sum(e.status == "completed" for e in event.entries)
            self._ops.append(("report", self.token, f"plan: {done}/{len(event.entries)} done"))
        self._wake.set()  # the rest (usage, titles, terminals) has no LSP shape

    # ---- events ---------------------------------------------------------------------

    def _end_text(self) -> None:
        if self._parts:
            text = "".join(self._parts)
            self._parts = []
            self.record.items.append(text)
            if text.strip():
                self.answer = text

    def _started(self, event: ToolCallStarted) -> None:
        self._end_text()
        call = Call(event.title)  # the tool's name until the call's arguments give it a title
        self._calls[event.call_id] = call
        self.record.items.append(call)

    def _patched(self, event: ToolCallPatch) -> None:
        call = self._calls.get(event.call_id)
        if call is None:
            return
        if event.title is not None:
            call.title = event.title
        if event.status is None or event.status == call.status:
            return
        call.status = event.status
        token = f"{self.token}/{event.call_id}"
        if token not in self._begun:  # its progress starts once it has its title
            self._begun.add(token)
            self._ops.append(("begin", token, call.title))
        if event.status == "in_progress":
            self._ops.append(("report", token, f"{call.title}: running"))
            return
        if event.status == "failed":
            texts = [c.text for c in event.content or () if isinstance(c, TextContent)]
            call.detail = one_line(texts[0]) if texts else ""
        self._ops.append(("end", token, f"{call.title}: {_MARK[event.status]}"))

    # ---- sending ----------------------------------------------------------------------

    async def run(self) -> None:
        """Send the progress in order until `close()`; reports are batched."""
        reported = ""
        while True:
            if not (self._ops or self._dirty or self._closing):
                await self._wake.wait()
            self._wake.clear()
            while self._ops:
                await self._send(self._ops.popleft())
            if self._dirty:
                self._dirty = False
                latest = tail("".join(self._parts))
                if self._progress and self.token in self._usable and latest and latest != reported:
                    reported = latest
                    self._report(self.token, latest)
                with anyio.move_on_after(REPORT_EVERY_S):  # the next report waits; the end does not
                    await self._closed.wait()
            elif self._closing:
                return

    async def close(self, stop_reason: str, sender: asyncio.Task[None]) -> None:
        """End the turn's progress and wait until everything is sent."""
        self._end_text()
        for call_id, call in self._calls.items():
            if call.status in ("pending", "in_progress") and f"{self.token}/{call_id}" in self._begun:
                self._ops.append(("end", f"{self.token}/{call_id}", f"{call.title}: {_MARK[call.status]}"))
        self.record.stop_reason = stop_reason
        self._ops.append(("end", self.token, _ENDED.get(stop_reason, stop_reason)))
        self._closing = True
        self._closed.set()
        self._wake.set()
        await sender

    async def _send(self, op: Op) -> None:
        what, token, text = op
        if what == "begin" and token == self.token:
            text = f"Tether: {text}"  # the turn's title: what was asked
        if not self._progress:
            if what == "end" or (what == "begin" and token == self.token):
                self._rpc.notify(
                    "window/logMessage", {"type": 4, "message": text if what == "begin" else f"Tether: {text}"}
                )
            return
        if what == "begin" and await self._create(token):
            self._usable.add(token)
            # the turn can be cancelled from the progress (window/workDoneProgress/cancel)
            self._progress_value(token, {"kind": "begin", "title": text, "cancellable": token == self.token})
        elif what == "report" and token in self._usable:
            self._report(token, text)
        elif what == "end" and token in self._usable:
            self._usable.discard(token)
            self._progress_value(token, {"kind": "end", "message": text})

    async def _create(self, token: str) -> bool:
        with anyio.move_on_after(CREATE_WAIT_S):
            try:
                await self._rpc.request("window/workDoneProgress/create", {"token": token})
            except (ClientRequestFailed, ConnectionError):  # refused, or the window went away
                return False
            return True
        return False

    def _report(self, token: str, message: str) -> None:
        self._progress_value(token, {"kind": "report", "message": message})

    def _progress_value(self, token: str, value: JsonObject) -> None:
        self._rpc.notify("$/progress", {"token": token, "value": value})


_MARK = {"completed": "done", "failed": "failed", "pending": "not run", "in_progress": "stopped"}
_ENDED = {
    "end_turn": "done",
    "cancelled": "cancelled",
    "max_tokens": "stopped: the answer reached the model's length limit",
    "max_turn_requests": "stopped: too many steps",
    "refusal": "the model refused",
    "error": "failed",
}
