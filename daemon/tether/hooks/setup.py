"""The per-turn wiring: the user's hooks loaded, the asker wrapped, the reviewer made.

Owns: reading the hooks for a turn (the user config is read again each turn, so an edit
applies to the next prompt without a restart), and what `reviewer` / `ask_first` turn on:
the turn's hook port (`agent.hook_port.NO_HOOKS` when neither hooks nor ask-first are).
Must not: run hooks or decide anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..agent.hook_port import NO_HOOKS
from .config import load_hooks

if TYPE_CHECKING:
    from ..agent.hook_port import HookPort
    from ..agent.session import AgentSession
    from ..agent.sink import TurnSink
    from ..approvals import Asker
    from ..config import Settings
    from ..providers.base import Provider
    from .engine import Hooks

__all__ = ["TurnHooks", "turn_hooks"]


@dataclass(slots=True)
class TurnHooks:
    port: HookPort  # what the turn calls at its points
    asker: Asker
    ask_first: bool


def turn_hooks(
    settings: Settings,
    session: AgentSession,
    turn_id: str,
    sink: TurnSink,
    provider: Provider,
    asker: Asker,
    hidden_paths: tuple[str, ...],
    home: Path,
) -> TurnHooks:
    from ..config.layers import user_config_path

    user_path, _explicit = user_config_path()
    found = load_hooks(user_path, Path(session.workspace), home)
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
