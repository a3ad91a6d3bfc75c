"""What a sub-agent's turn is given instead of its parent's: a sink, a provider, an asker.

Owns: `ChildSink`, `BudgetedProvider` and `ChildAsker` (what each changes:
docs/decisions/0011-agent.md). Must not: run a turn, write to the store, build protocol
JSON, or do more per text delta than a list append.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import TYPE_CHECKING, cast

from ..approvals import ApprovalRequest, Asker, AskerAnswer
from ..providers.base import ModelRequest, Provider, ProviderError, ProviderEvent, UsageReport
from .sink import (
    ContextCompacted,
    Notice,
    StepStarted,
    TextContent,
    ToolCallPatch,
    ToolCallStarted,
    TurnEvent,
    TurnSink,
)

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterator

# What the child's system prompt adds to the usual one.
CHILD_NOTE = (
    "\n\nYou are a sub-agent: another agent handed you the task in the user message and sees "
    "nothing of your work but your last message. You do not see its conversation. Do the task "
    "with your tools, then end with a self-contained answer: what you found or did, with file "
    "paths and line numbers where they help."
)
SHOWN_LINES = 40  # the progress shows the child's last lines
LINE_CHARS = 300  # of each step's text


class ChildSink:
    """A sub-agent turn's `TurnSink`, nested under the `delegate` call in the parent's; and,
    given `own` (the child's session shown as one of its own: ACP v2), every event as it is."""

    __slots__ = ("parent", "call_id", "child_id", "own", "step", "_said", "_lines", "_calls", "_shown")

    def __init__(self, parent: TurnSink, call_id: str, child_id: str, own: TurnSink | None = None) -> None:
        self.parent, self.call_id, self.child_id, self.own = parent, call_id, child_id, own
        self.step: StepStarted | None = None  # the child's current step (its ids, for a view made later)
        self._said: list[str] = []  # the current step's text, not yet a line
        self._lines: list[list[str]] = [["", f"sub-agent started (session {child_id})", ""]]
        self._calls: dict[str, list[str]] = {}  # a child call id -> its line ([bullet, title, mark])
        self._shown = ""

    def text(self, delta: str) -> None:
        self._said.append(delta)
        if self.own is not None:
            self.own.text(delta)

    def thought(self, delta: str) -> None:
        if self.own is not None:  # the child's thinking is in its transcript, not in the parent's call
            self.own.thought(delta)

    def emit(self, event: TurnEvent) -> None:
        if self.own is not None:
            self.own.emit(event)
        if isinstance(event, ToolCallStarted):
            self.parent.emit(
                dataclasses.replace(event, call_id=self.nested(event.call_id), parent_call_id=self.call_id)
            )
            self._fold()
            line = self._calls[event.call_id] = ["• ", event.title, ""]
            self._lines.append(line)
        elif isinstance(event, ToolCallPatch):
            self.parent.emit(
                dataclasses.replace(event, call_id=self.nested(event.call_id), parent_call_id=self.call_id)
            )
            self._call_changed(event)
        elif isinstance(event, Notice):
            self._fold()
            self._lines.append(["", " ".join(event.text.split()), ""])
        elif isinstance(event, ContextCompacted):
            self._lines.append(["", f"[its context was summarised: {event.reason}]", ""])
        elif isinstance(event, StepStarted):
            self.step = event
            self._fold()
        else:
            return  # usage, title, plan, memory, terminals: the child's own
        self.show()

    def _call_changed(self, event: ToolCallPatch) -> None:
        line = self._calls.get(event.call_id)
        if line is None:
            return
        if event.title is not None:
            line[1] = event.title
        if event.status in ("completed", "failed"):
            line[2] = " ✓" if event.status == "completed" else " ✗"

    def nested(self, call_id: str) -> str:
        return f"{self.call_id}/{call_id}"

    def _fold(self) -> None:
        if not self._said:
            return
        said = " ".join("".join(self._said).split())
        self._said = []
        if said:
            self._lines.append(["", said if len(said) <= LINE_CHARS else said[: LINE_CHARS - 1] + "…", ""])

    def show(self) -> None:
        """The progress as the `delegate` call's content (sent only when it changed)."""
        text = "\n".join("".join(line) for line in self._lines[-SHOWN_LINES:])
        if text == self._shown:
            return
        self._shown = text
        self.parent.emit(ToolCallPatch(self.call_id, content=(TextContent(text),), child_session_id=self.child_id))

    def flush(self) -> None:
        self._fold()
        self.show()
        self.parent.flush()
        if self.own is not None:
            self.own.flush()


class BudgetedProvider(Provider):
    """The parent's provider for a sub-agent: its note, `purpose: "delegate"`, its budget."""

    def __init__(self, inner: Provider, budget: int) -> None:
        self.inner, self.budget = inner, budget
        self.name, self.model, self.context_window = inner.name, inner.model, inner.context_window
        self.used = 0  # input + output tokens, as the provider reported them
        self.spent = False

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        if self.used >= self.budget:
            self.spent = True
            raise ProviderError(
                f"budget spent: the sub-agent used {self.used} of its {self.budget} tokens "
                f"(the `delegate_tokens` setting)",
                kind="budget",
            )
        if "purpose" not in request.metadata:
            request = dataclasses.replace(
                request, system=request.system + CHILD_NOTE, metadata={**request.metadata, "purpose": "delegate"}
            )
        events = cast("AsyncGenerator[ProviderEvent, None]", self.inner.stream(request))
        async with contextlib.aclosing(events) as stream:
            async for event in stream:
                if type(event) is UsageReport:
                    self.used += event.input_tokens + event.output_tokens
                yield event


class ChildAsker:
    """The parent's asker, for a sub-agent's call: asked under the parent's session and
    the `delegate` call (the same gate and hooks decided to ask); the child's own session
    and call id go with it (ACP v2 asks with those)."""

    def __init__(self, inner: Asker | None, session_id: str, call_id: str) -> None:
        self.inner, self.session_id, self.call_id = inner, session_id, call_id

    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        if self.inner is None:
            return AskerAnswer("unavailable", detail="no way to ask the user was configured")
        shown = dataclasses.replace(
            request,
            session_id=self.session_id,
            call_id=f"{self.call_id}/{request.call_id}",
            parent_call_id=self.call_id,
            child_session_id=request.session_id,
            child_call_id=request.call_id,
        )
        return await self.inner.ask(shown, reason)
