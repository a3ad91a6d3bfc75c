"""ACP's session methods: `session/new|load|resume|list|close|delete|set_mode|fork`,
`session/prompt` and `session/cancel` (SPEC §3.5-§3.13, §3.30).

Owns: their params and results. Must not: hold behaviour. `error=` on a field is the
exact message the hand-written check of that method gave before the converter took it
over (the wire does not change).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

import attrs

from ._config_options import SessionConfigOption
from ._fields import Meta, wire
from ._json import JsonObject
from ._modes import ModeId, SessionModeState

__all__ = [
    "EmptyResult", "ForkSessionParams", "ListSessionsParams", "ListSessionsResult",
    "LoadSessionParams", "LoadSessionResult", "NewSessionParams", "NewSessionResult",
    "PromptParams", "PromptResult", "PromptResultMeta", "PromptTetherMeta",
    "ResumeSessionParams", "ResumeSessionResult", "SessionIdParams", "SessionInfo",
    "SetModeParams", "TerminalCancelParams", "ToolCallCancelParams",
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


_REQUIRED_ID = "invalid params for {method}: sessionId (a non-empty string) is required"
_CWD = "invalid params for {method}: cwd must be a string"


@attrs.define
class NewSessionParams:
    cwd: str
    mcp_servers: list[JsonObject] = attrs.Factory(list)
    meta: Meta = None


@attrs.define
class NewSessionResult:
    """Also the result of `session/fork` and `_tether/session/fork`."""

    session_id: str
    modes: SessionModeState
    config_options: Union[list[SessionConfigOption], None] = None


@attrs.define
class LoadSessionParams:
    """Params of `session/load` and of `session/resume`."""

    session_id: str
    cwd: str
    mcp_servers: list[JsonObject] = attrs.Factory(list)
    meta: Meta = None


@attrs.define
class LoadSessionResult:
    """Result of `session/load` and of `session/resume`."""

    modes: SessionModeState
    config_options: Union[list[SessionConfigOption], None] = None


ResumeSessionParams = LoadSessionParams
ResumeSessionResult = LoadSessionResult


@attrs.define
class ListSessionsParams:
    cwd: Union[str, None] = None
    cursor: Union[str, None] = None
    meta: Meta = None


@attrs.define
class SessionInfo:
    """`title` is omitted until the first prompt gives it one (never null: some clients
    crash on a null title); `updatedAt` is ISO 8601 UTC; a sub-agent's session names the
    session and `delegate` call it ran under in `_meta.tether`."""

    session_id: str
    cwd: str
    updated_at: Union[str, None]
    title: Union[str, None] = None
    # a sub-agent's session: `{"tether": {"parentSessionId", "parentCallId"}}`
    meta: Meta = None


@attrs.define
class ListSessionsResult:
    sessions: list[SessionInfo]
    next_cursor: Union[str, None] = None


@attrs.define
class SessionIdParams:
    """Params of `session/close`, `session/delete` and `session/cancel`."""

    session_id: str
    meta: Meta = None


@attrs.define
class ToolCallCancelParams:
    """Params of `tool_call/cancel` and `_tether/toolCall/cancel` (§12.4): the call to stop."""

    session_id: str
    tool_call_id: str
    meta: Meta = None


@attrs.define
class TerminalCancelParams:
    """Params of `terminal/cancel`: the command whose terminal this is is stopped."""

    session_id: str
    terminal_id: str
    meta: Meta = None


@attrs.define
class EmptyParams:
    """No params (or `{}`): `initialized`, `shutdown`, `exit`, `_tether/daemon/stats`."""

    # (here, not in `_methods`, so the daemon's start path structures them)
    meta: Meta = None


@attrs.define
class EmptyResult:
    """`{}`: the result of `session/close`, `session/delete`, `session/set_mode`,
    `_tether/rules/remove`."""

    meta: Meta = None


@attrs.define
class SetModeParams:
    session_id: str
    mode_id: ModeId
    meta: Meta = None


@attrs.define
class ForkSessionParams:
    """`session/fork` (ACP, unstable): `cwd` is where the source is looked for and where
    the fork is stored; `mcpServers` is ignored."""

    session_id: str = wire(error=_REQUIRED_ID, non_empty=True)
    cwd: Union[str, None] = wire(default=None, error=_CWD)
    mcp_servers: Any = None
    meta: Meta = None
