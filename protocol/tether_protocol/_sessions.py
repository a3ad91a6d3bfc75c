"""ACP's session methods: `session/new|load|resume|list|close|delete|set_mode|fork|prompt|cancel`
(SPEC §3.5-§3.13, §3.30) and stopping one tool call or terminal (`tool_call/cancel`, §12.4).

Owns: naming their params and results for Tether (generated, `acp_v1/sessions.py`: ACP v1's, and
v2's `tool_call/cancel`, `terminal/cancel`; the prompt's are `_prompt`'s); hand-declared only
`fork` (unstable: v1's schema lacks it) with its checks' words, and no params. Must not: hold behaviour.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from ._codec import Meta, NonEmpty, Wire
from .acp_v1.sessions import (
    EmptyResult,
    ListSessionsParams,
    ListSessionsResult,
    LoadSessionParams,
    LoadSessionResult,
    NewSessionParams,
    NewSessionResult,
    SessionIdParams,
    SessionInfo,
    SetModeParams,
    TerminalCancelParams,
    ToolCallCancelParams,
)

__all__ = [
    "EmptyResult",
    "ForkSessionParams",
    "ListSessionsParams",
    "ListSessionsResult",
    "LoadSessionParams",
    "LoadSessionResult",
    "NewSessionParams",
    "NewSessionResult",
    "PromptParams",
    "PromptResult",
    "PromptResultMeta",
    "PromptTetherMeta",
    "ResumeSessionParams",
    "ResumeSessionResult",
    "SessionIdParams",
    "SessionInfo",
    "SetModeParams",
    "TerminalCancelParams",
    "ToolCallCancelParams",
]

if TYPE_CHECKING:
    from ._prompt import PromptParams, PromptResult, PromptResultMeta, PromptTetherMeta

# `session/prompt`'s messages live in `_prompt` (they need the content blocks, which
# `session/new` does not): named here too, and imported the first time one is used.
_PROMPT = ("PromptParams", "PromptResult", "PromptResultMeta", "PromptTetherMeta")


def __getattr__(name: str) -> Any:
    if name in _PROMPT:
        from . import _prompt

        return getattr(_prompt, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


ResumeSessionParams = LoadSessionParams
ResumeSessionResult = LoadSessionResult

_REQUIRED_ID = "invalid params for {method}: sessionId (a non-empty string) is required"
_CWD = "invalid params for {method}: cwd must be a string"


class EmptyParams(Wire):
    """No params (or `{}`): `initialized`, `shutdown`, `exit`, `_tether/daemon/stats`."""

    # (here, not in `_methods`, so the daemon's start path structures them)
    meta: Meta = msgspec.field(default=None, name="_meta")


class ForkSessionParams(Wire):
    """`session/fork` (ACP, unstable): `cwd` is where the source is looked for and where
    the fork is stored; `mcpServers` is ignored."""

    WIRE_ERRORS: ClassVar[dict[str, str]] = {"sessionId": _REQUIRED_ID, "cwd": _CWD}

    session_id: NonEmpty
    cwd: str | None = None
    mcp_servers: Any = None
    meta: Meta = msgspec.field(default=None, name="_meta")
