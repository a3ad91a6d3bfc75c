"""Hooks, the approval reviewer and ask-first: what the user configures around the tool loop.

Hooks are the user's own commands, run at `prompt_submit`, `pre_tool`, `post_tool`,
`permission_request`, `step_end`, `turn_end`, `pre_compact` and `session_start` with a
JSON event on stdin; they answer allow / deny / ask / modify (Tether's or Claude Code's
JSON). They come from the user config only (a workspace's `[hooks]` run only when the
user config trusts that workspace), run in the OS sandbox and minimal environment of
`run_command`, and every action they take is shown in the transcript. The reviewer
(`reviewer = "on"`) is a second model call that may approve a call the user would be
asked about; ask-first (`ask_first = "on"`) makes the agent ask before acting on a
destructive, vague prompt.

Owns: config.py (the `[hooks]` tables), runner.py (one hook process), answers.py (its
answer), engine.py (a stage fired, answers combined, notices), points.py (the tool-call
points), turn_points.py (the prompt's and the turn's), port.py (all of them as the turn's
hook port, `agent/hook_port.py`), asking.py (the asker that lets `permission_request`
hooks and the reviewer answer first), reviewer.py, ask_first.py, setup.py (the per-turn
wiring: the port `server/turns.py` gives the turn).
Must not: decide the approval order (approvals/gate.py does; these only feed it), let a
broken hook or reviewer allow anything (fail closed: ask), or run a hook outside the sandbox
commands get. It may import the agent's types (sink, state, session, the port); `agent/`
never imports it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import STAGES, HookSet, HookSpec, load_hooks
    from .engine import HookOutcome, Hooks

__all__ = ["STAGES", "HookOutcome", "HookSet", "HookSpec", "Hooks", "load_hooks"]

# The package's names are imported when first used: a turn with no hooks configured
# (and no ask-first) imports only `setup` and `config`, never the points or the engine.
_LAZY = {"STAGES": "config", "HookSet": "config", "HookSpec": "config", "load_hooks": "config",
         "HookOutcome": "engine", "Hooks": "engine"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
