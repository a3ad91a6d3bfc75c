"""The per-turn wiring: the user's hooks loaded, the asker wrapped, the reviewer made.

Owns: wiring the hooks a turn is given (read by services/turn_setup.py, again when the user or
workspace config changed, so an edit applies to the next prompt without a restart), and what
`reviewer` / `ask_first` turn on: the turn's hook port (`NO_HOOKS` when neither hooks nor ask-first are).
Must not: read the config or run hooks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..agent.hook_port import NO_HOOKS

if TYPE_CHECKING:
    from ..agent.hook_port import HookPort
    from ..agent.session import AgentSession
    from ..agent.sink import TurnSink
    from ..approvals import Asker
    from ..config import Settings
    from ..providers.base import Provider
    from .config import HookSet
    from .engine import Hooks

__all__ = ["TurnHooks", "turn_hooks"]


@dataclass(slots=True)
class TurnHooks:
    port: HookPort  # what the turn calls at its points
    asker: Asker
    ask_first: bool


def turn_hooks(
    settings: Settings,
    found: HookSet,
    session: AgentSession,
    turn_id: str,
    sink: TurnSink,
    provider: Provider,
    asker: Asker,
    hidden_paths: tuple[str, ...],
) -> TurnHooks:
    hooks = reviewer = None
    # the engine, the reviewer and the asker around them: imported by a turn that has them
    if found:
        from .engine import Hooks
        from .runner import HookPlace

        place = HookPlace(Path(session.workspace), settings.sandbox, settings.allow_env, hidden_paths)
        hooks = Hooks(found, place, sink, session.id, turn_id)
    if settings.reviewer == "on":
        from .reviewer import Reviewer

        reviewer = Reviewer(provider, session, model=settings.reviewer_model, timeout=settings.reviewer_timeout)
    ask_first = settings.ask_first == "on"
    port = _port(hooks, ask_first)
    if hooks is None and reviewer is None:
        return TurnHooks(port, asker, ask_first)
    from .asking import HookedAsker

    return TurnHooks(port, HookedAsker(asker, hooks, reviewer, sink), ask_first)


def _port(hooks: Hooks | None, ask_first: bool) -> HookPort:
    if hooks is None and not ask_first:
        return NO_HOOKS  # a turn with neither imports none of the points
    from .port import UserHooks

    return UserHooks(hooks)
