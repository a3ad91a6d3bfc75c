"""Per-call cancel: the running tool calls of a session that the user may stop one by one.

Owns: `RunningCalls`: each stoppable call with its cancel scope or its sub-agent turns, the
calls that ended or cannot be stopped (so a late cancel is told which), what the model is told.
Must not: know the protocol (server/item_cancel.py answers the request) or run tools.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..tools.base import ToolResult
    from .session import ActiveTurn
    from .sink import TerminalStarted

# How many ended calls a session remembers (a cancel naming an older one is "unknown").
_REMEMBERED = 2048


@dataclass(slots=True, eq=False)
class RunningCall:
    """One running call that can be stopped (`tool_call/cancel`, `terminal/cancel`)."""

    call_id: str
    handle: ActiveTurn
    terminal: TerminalStarted | None = None  # the terminal its command's output shows in
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    stopped_children: bool = False

    def cancel(self) -> None:
        """Stop the call: its sub-agent turns if it has any (they end their transcripts
        as cancelled and the call returns), else its scope."""
        children = [c for c in self.handle.children if c.parent_call_id == self.call_id]
        for child in children:
            child.cancel()
        self.stopped_children = bool(children)
        if not children:
            self.scope.cancel()

    @property
    def cancelled(self) -> bool:
        """True once the cancel stopped the call (False: it finished first)."""
        return self.scope.cancelled_caught or self.stopped_children

    def told(self, result: ToolResult | None) -> ToolResult:
        """The result the model gets for a call the user stopped."""
        from ..tools.base import ToolResult  # not at import: the session is on the start path

        text = "cancelled by the user: the call was stopped before it finished; do not run it again unless asked"
        if result is not None and result.text:
            text += f". What it returned:\n{result.text}"
        return ToolResult(text, is_error=True)


class RunningCalls:
    """A session's running calls by id, and the ones it saw end (bounded)."""

    __slots__ = ("_ended", "_running")

    def __init__(self) -> None:
        self._running: dict[str, RunningCall] = {}
        self._ended: dict[str, str] = {}  # call id -> why it cannot be cancelled now

    @contextmanager
    def running(
        self, call_id: str, handle: ActiveTurn, terminal: TerminalStarted | None = None
    ) -> Iterator[RunningCall]:
        """The call runs in this block; a cancel ends the block early (caught here)."""
        call = RunningCall(call_id, handle, terminal)
        self._running[call_id] = call
        try:
            with call.scope:
                yield call
        finally:
            del self._running[call_id]
            self.ended(call_id, "it has already finished")

    def ended(self, call_id: str, why: str) -> None:
        self._ended[call_id] = why
        if len(self._ended) > _REMEMBERED:
            del self._ended[next(iter(self._ended))]

    def cancel(self, call_id: str) -> str | None:
        """Stop a running call; None if stopped, else why it cannot be."""
        call = self._running.get(call_id)
        if call is None:
            return self._ended.get(call_id, "no tool call with this id ran in this session")
        call.cancel()
        return None

    def by_terminal(self, terminal_id: str) -> str | None:
        """The running call whose command shows in this terminal."""
        return next(
            (c.call_id for c in self._running.values() if c.terminal and c.terminal.terminal_id == terminal_id), None
        )

    def terminals(self) -> list[tuple[ActiveTurn, TerminalStarted]]:
        """The terminals of the commands running now, with the turn each runs in (a
        window that joins is shown them as they are)."""
        return [(c.handle, c.terminal) for c in self._running.values() if c.terminal is not None]
