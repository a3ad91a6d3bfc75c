"""ACP's session methods: `session/new|load|resume|list|close|delete|set_mode|fork|prompt|cancel`
(SPEC §3.5-§3.13, §3.30) and stopping one tool call or terminal (`tool_call/cancel`, §12.4).

Owns: naming their params and results for Tether (ACP v1's are generated, `acp_v1/sessions.py`;
the prompt's are `_prompt`'s); hand-declared only those not in ACP v1's stable schema (`fork`,
`tool_call/cancel`, `terminal/cancel`, no params) with their checks' words. Must not: hold behaviour.
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


class ToolCallCancelParams(Wire):
    """Params of `tool_call/cancel` and `_tether/toolCall/cancel` (§12.4): the call to stop."""

    session_id: str
    tool_call_id: str
    meta: Meta = msgspec.field(default=None, name="_meta")


class TerminalCancelParams(Wire):
    """Params of `terminal/cancel`: the command whose terminal this is is stopped."""

    session_id: str
    terminal_id: str
    meta: Meta = msgspec.field(default=None, name="_meta")


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
