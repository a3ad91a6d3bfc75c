"""Hooks, the approval reviewer and ask-first: what the user configures around the tool loop (SPEC §5.20-5.21).

Owns: the `[hooks]` tables, running one hook and reading its answer, firing a stage, the tool-call and turn
points, the turn's hook port, the asker that lets hooks and the reviewer answer first, and the per-turn wiring.
Must not: decide the approval order (approvals/gate.py), let a broken hook or reviewer allow anything, or run
a hook outside the commands' sandbox; `agent/` never imports it. Why: docs/decisions/0007-hooks.md.
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
_LAZY = {
    "STAGES": "config",
    "HookSet": "config",
    "HookSpec": "config",
    "load_hooks": "config",
    "HookOutcome": "engine",
    "Hooks": "engine",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
