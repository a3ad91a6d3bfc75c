"""`tool_call/cancel`, `terminal/cancel` (ACP v2) and `_tether/toolCall/cancel` (v1): stop
one running tool call while its turn goes on (SPEC §12.4).

Owns: finding the call (by id, or by the terminal its command shows in) in the live
session's running calls, asking it to stop, and the `-32602` that says why a call cannot
be stopped. The request is answered once the stop is asked; the call then ends
`cancelled` (or `completed`/`failed`, if it finished first) in the turn's updates.
Must not: run or end the turn (agent/call_cancel.py and the executor do).
"""

from __future__ import annotations

from tether_protocol._errors import InvalidParams
from tether_protocol._sessions import EmptyResult, TerminalCancelParams, ToolCallCancelParams

from .context import ClientConnection


async def tool_call_cancel(ctx: ClientConnection, params: ToolCallCancelParams) -> EmptyResult:
    """Stop the running call `toolCallId` of the session."""
    session = ctx.daemon.registry.get_live(params.session_id)
    why = session.calls.cancel(params.tool_call_id)
    if why is not None:
        raise InvalidParams(
            f"tool call {params.tool_call_id!r} of session {params.session_id!r} cannot be cancelled: {why}; "
            f"only a running call that advertised capabilities.cancel can be"
        )
    return EmptyResult()


async def terminal_cancel(ctx: ClientConnection, params: TerminalCancelParams) -> EmptyResult:
    """Stop the running command whose output shows in terminal `terminalId`."""
    session = ctx.daemon.registry.get_live(params.session_id)
    call_id = session.calls.by_terminal(params.terminal_id)
    if call_id is None:
        raise InvalidParams(
            f"no running command of session {params.session_id!r} shows in terminal {params.terminal_id!r} "
            f"(it finished, or the id is unknown); stop a call by its id with tool_call/cancel"
        )
    session.calls.cancel(call_id)
    return EmptyResult()
