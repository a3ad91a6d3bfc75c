"""A session's modes (ACP v1): the `modes` of `session/new|load|resume` answers.

Owns: naming `ModeId`, `SessionMode` and `SessionModeState` for Tether (generated,
`acp_v1/modes.py`; re-exported by `_common`, where they were). Their own module because
`session/new`'s answer needs them and nothing else of `_common`: the start path does not
build the content blocks and tool call shapes (bench/RESULTS.md). Must not: hold behaviour.
"""

from __future__ import annotations

from .acp_v1.modes import ModeId, SessionMode, SessionModeState

__all__ = ["ModeId", "SessionMode", "SessionModeState"]
