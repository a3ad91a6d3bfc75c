"""`tool_call/cancel`, `terminal/cancel` (ACP v2), `_tether/toolCall/cancel` (v1): stop one call (SPEC §12.4).

Owns: finding the running call (by id, or by its terminal), asking it to stop, answering once
asked, and the `-32602` that says why a call cannot be stopped.
Must not: run or end the turn (agent/call_cancel.py and the executor do).
"""

from __future__ import annotations

from tether_protocol import EmptyResult, InvalidParams, TerminalCancelParams, ToolCallCancelParams

from ..agent.call_cancel import RunningCalls
from ..server.context import ClientConnection


def _calls(ctx: ClientConnection, session_id: str) -> RunningCalls:
    """The session's running calls; a running sub-agent's session (v2: it is shown as one) has
    its parent's, where its calls run."""
    session = ctx.daemon.registry.live.get(session_id)
    if session is None:
        from ..services.child_sessions import running_child

        found = running_child(ctx, session_id)
        return found[0].calls if found is not None else ctx.daemon.registry.get_live(session_id).calls
    return session.calls


async def tool_call_cancel(ctx: ClientConnection, params: ToolCallCancelParams) -> EmptyResult:
    """Stop the running call `toolCallId` of the session."""
    why = _calls(ctx, params.session_id).cancel(params.tool_call_id)
    if why is not None:
        raise InvalidParams(
            f"tool call {params.tool_call_id!r} of session {params.session_id!r} cannot be cancelled: {why}; "
            f"only a running call that advertised capabilities.cancel can be"
        )
    return EmptyResult()


async def terminal_cancel(ctx: ClientConnection, params: TerminalCancelParams) -> EmptyResult:
    """Stop the running command whose output shows in terminal `terminalId`."""
    calls = _calls(ctx, params.session_id)
    call_id = calls.by_terminal(params.terminal_id)
    if call_id is None:
        raise InvalidParams(
            f"no running command of session {params.session_id!r} shows in terminal {params.terminal_id!r} "
            f"(it finished, or the id is unknown); stop a call by its id with tool_call/cancel"
        )
    calls.cancel(call_id)
    return EmptyResult()
