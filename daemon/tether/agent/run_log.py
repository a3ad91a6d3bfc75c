"""The executor's port to the turn's journal, and the asker that checkpoints through it.

Owns: `RunLog` (where the executor records results, marks a call started and asks for a
checkpoint) and `CheckpointingAsker` (the turn's state committed right before the user is
asked: the suspension point a stopped daemon resumes from).
Must not: write to the store itself (the journal behind `RunLog` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..approvals import ApprovalRequest, Asker, AskerAnswer

if TYPE_CHECKING:
    from .state import CallOutcome


class RunLog(Protocol):
    """Where the executor hands results and asks for checkpoints (the turn's journal)."""

    def record(self, outcome: CallOutcome) -> None: ...

    async def checkpoint(self) -> None: ...

    async def mark_started(self, call_id: str) -> None: ...


class CheckpointingAsker:
    """Commits the turn's state right before the user is asked (the suspension point)."""

    def __init__(self, inner: Asker | None, journal: RunLog) -> None:
        self.inner, self.journal = inner, journal

    async def ask(self, request: ApprovalRequest, reason: str) -> AskerAnswer:
        if self.inner is None:
            return AskerAnswer("unavailable", detail="no way to ask the user was configured")
        await self.journal.checkpoint()
        return await self.inner.ask(request, reason)
