"""The objects a session's turns reuse: its journal, run report builder and input guard.

Owns: `TurnParts`, made once with the session's turn setup (services/turn_setup.py) and handed
to each of its turns, which starts each part afresh (a cancelled or failed turn leaves nothing
for the next). Must not: hold a turn's own values itself, or be shared by two sessions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .guard import InputGuard
from .journal import TurnJournal
from .report import RunReportBuilder

if TYPE_CHECKING:
    from .guard import GuardMode
    from .session import AgentSession


@dataclass(frozen=True, slots=True)
class TurnParts:
    """One session's: its turns run one at a time, each resets the parts as it starts."""

    journal: TurnJournal
    guard: InputGuard
    report: RunReportBuilder = field(default_factory=RunReportBuilder)


def turn_parts(session: AgentSession, guard_mode: GuardMode) -> TurnParts:
    return TurnParts(TurnJournal(session, ""), InputGuard(guard_mode))
