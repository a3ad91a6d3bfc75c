"""Which `PromptTurn` a session's updates belong to while prompts wait in the daemon's queue.

Owns: each session's prompts in flight, in send order, and the one whose turn runs now
(SPEC §3.37; the rule: docs/decisions/0014-clients.md).
Must not: read the updates (they go to the turn as they are) or send anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(slots=True)
class _Line(Generic[T]):
    running: T | None = None
    steers: list[T] = field(default_factory=list)  # sent with steer while a turn ran, not answered
    waiting: list[T] = field(default_factory=list)  # queued behind the running turn, oldest first


class TurnRouter(Generic[T]):
    """The turns of every session of a connection (see the module docstring)."""

    def __init__(self) -> None:
        self._lines: dict[str, _Line[T]] = {}

    def sent(self, session_id: str, turn: T, *, steer: bool = False) -> None:
        line = self._lines.setdefault(session_id, _Line())
        if line.running is None:
            line.running = turn  # nothing runs: it starts now (a steer then is just a prompt)
        elif steer:
            line.steers.append(turn)
        else:
            line.waiting.append(turn)

    def answered(self, session_id: str, turn: T) -> None:
        line = self._lines.get(session_id)
        if line is None:
            return
        if line.running is turn:
            line.running = line.steers.pop(0) if line.steers else (line.waiting.pop(0) if line.waiting else None)
        else:
            line.steers = [t for t in line.steers if t is not turn]
            line.waiting = [t for t in line.waiting if t is not turn]
        if line.running is None and not line.steers and not line.waiting:
            del self._lines[session_id]

    def running(self, session_id: str) -> T | None:
        line = self._lines.get(session_id)
        return None if line is None else line.running
