"""A session's modes (ACP v1): the `modes` of `session/new|load|resume` answers.

Owns: `ModeId`, `SessionMode` and `SessionModeState` (re-exported by `_common`, where
they were). Their own module because `session/new`'s answer needs them and nothing else
of `_common`: the start path does not build the content blocks and tool call shapes
(bench/RESULTS.md, "Issue 17's last start-up goals"). msgspec Structs. Must not: hold behaviour.
"""

from __future__ import annotations

from typing import Literal, Union

from ._codec import Wire

__all__ = ["ModeId", "SessionMode", "SessionModeState"]

ModeId = Literal["read-only", "ask", "auto-edit", "full-auto"]


# ---- modes ---------------------------------------------------------------------------


class SessionMode(Wire):
    id: ModeId
    name: str
    description: Union[str, None] = None


class SessionModeState(Wire):
    current_mode_id: ModeId
    available_modes: list[SessionMode]
