"""ACP's session methods: `session/new|load|resume|list|close|delete|set_mode|fork|prompt|cancel`
(SPEC §3.5-§3.13, §3.30) and stopping one tool call or terminal (`tool_call/cancel`, §12.4).

Owns: their params and results, as msgspec Structs (`_codec.Wire`; the prompt's are `_prompt`'s),
and the exact words of the hand-written checks they replaced (a class's `WIRE_ERRORS`).
Must not: hold behaviour.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Union

import msgspec
from msgspec import UNSET, UnsetType

from ._codec import Meta, NonEmpty, Wire
from ._config_options import SessionConfigOption
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


class NewSessionParams(Wire, omit_defaults=False):  # `mcpServers` written even when empty (ACP requires it)
    cwd: str
    mcp_servers: list[JsonObject] = msgspec.field(default_factory=list)
    meta: Union[JsonObject, None, UnsetType] = msgspec.field(default=UNSET, name="_meta")


class NewSessionResult(Wire):
    """Also the result of `session/fork` and `_tether/session/fork`."""

    session_id: str
    modes: SessionModeState
    config_options: Union[list[SessionConfigOption], None] = None


class LoadSessionParams(Wire, omit_defaults=False):  # `mcpServers` written even when empty (ACP requires it)
    """Params of `session/load` and of `session/resume`."""

    session_id: str
    cwd: str
    mcp_servers: list[JsonObject] = msgspec.field(default_factory=list)
    meta: Union[JsonObject, None, UnsetType] = msgspec.field(default=UNSET, name="_meta")


class LoadSessionResult(Wire):
    """Result of `session/load` and of `session/resume`."""

    modes: SessionModeState
    config_options: Union[list[SessionConfigOption], None] = None


ResumeSessionParams = LoadSessionParams
ResumeSessionResult = LoadSessionResult


class ListSessionsParams(Wire):
    cwd: Union[str, None] = None
    cursor: Union[str, None] = None
    meta: Meta = msgspec.field(default=None, name="_meta")


class SessionInfo(Wire):
    """`title` is omitted until the first prompt gives it one (never null: some clients
    crash on a null title); `updatedAt` is ISO 8601 UTC; a sub-agent's session names the
    session and `delegate` call it ran under in `_meta.tether`."""

    session_id: str
    cwd: str
    updated_at: Union[str, None]
    title: Union[str, None] = None
    # a sub-agent's session: `{"tether": {"parentSessionId", "parentCallId"}}`
    meta: Meta = msgspec.field(default=None, name="_meta")


class ListSessionsResult(Wire):
    sessions: list[SessionInfo]
    next_cursor: Union[str, None] = None


class SessionIdParams(Wire):
    """Params of `session/close`, `session/delete` and `session/cancel`."""

    session_id: str
    meta: Meta = msgspec.field(default=None, name="_meta")


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


class EmptyResult(Wire):
    """`{}`: the result of `session/close`, `session/delete`, `session/set_mode`,
    `_tether/rules/remove`."""

    meta: Meta = msgspec.field(default=None, name="_meta")


class SetModeParams(Wire):
    session_id: str
    mode_id: ModeId
    meta: Meta = msgspec.field(default=None, name="_meta")


class ForkSessionParams(Wire):
    """`session/fork` (ACP, unstable): `cwd` is where the source is looked for and where
    the fork is stored; `mcpServers` is ignored."""

    WIRE_ERRORS: ClassVar[dict[str, str]] = {"sessionId": _REQUIRED_ID, "cwd": _CWD}

    session_id: NonEmpty
    cwd: Union[str, None] = None
    mcp_servers: Any = None
    meta: Meta = msgspec.field(default=None, name="_meta")
