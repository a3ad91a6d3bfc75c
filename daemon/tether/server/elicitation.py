"""Questions to the user as ACP v2 forms (`elicitation/create`, SPEC §12.8): ask-first's, and MCP servers'.

Owns: `clarifier` (ask-first's question for a v2 client with `capabilities.elicitation.form`: one text field,
an answer over `max_message_mib` refused), `mcp_form_relay` (an MCP server's checked form, shown as that server's,
its answer handed back), the session's state while a form waits (`requires_action`, then `running`).
Must not: decide when to ask (hooks/ask_first.py, the MCP server) or what the answer does (agent/loop.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..agent.sink import Notice, TurnStateChanged
from ..transport.rpc import ClientRequestFailed, unless_window_left

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from tether_protocol import JsonObject

    from ..agent.sink import TurnSink
    from ..services.ports import ClientPort
    from ..tools.base import Elicit

FIELD = "answer"


def clarifier(ctx: ClientPort, session_id: str) -> Callable[[str], Awaitable[str | None]] | None:
    """How this client is asked ask-first's question in a form, or None (it shows none)."""
    if ctx.client is None or not ctx.client.shows_forms:
        return None

    async def clarify(question: str) -> str | None:
        return await ask_in_form(ctx, session_id, question)

    return clarify


async def _form(ctx: ClientPort, params: JsonObject, sink: TurnSink | None) -> Any:
    """The client's answer to a form (None: the request failed, or its window went away with the
    form open); the turn `requires_action` meanwhile."""
    if sink is not None:
        sink.emit(TurnStateChanged("requires_action"))
    try:
        return await unless_window_left(ctx.rpc.request("elicitation/create", params))
    except ClientRequestFailed:
        return None


async def ask_in_form(ctx: ClientPort, session_id: str, question: str) -> str | None:
    """The user's answer, or None: declined, cancelled, empty, or the request failed (the
    turn then ends as an unanswered question does)."""
    params = {
        "mode": "form",
        "sessionId": session_id,
        "message": question,
        "requestedSchema": {
            "type": "object",
            "properties": {
                FIELD: {
                    "type": "string",
                    "title": "Your answer",
                    "minLength": 1,
                    "description": "What you mean; it goes to the model as your next message.",
                }
            },
            "required": [FIELD],
        },
    }
    sink = _turn_sink(ctx, session_id)
    result = await _form(ctx, params, sink)
    content = result.get("content") if isinstance(result, dict) and result.get("action") == "accept" else None
    answer = content.get(FIELD) if isinstance(content, dict) else None
    if not isinstance(answer, str) or not answer.strip():
        return None
    too_large = _over_limit(ctx, answer)
    if too_large is not None:  # not stored, not sent: the turn ends as an unanswered question does
        if sink is not None:
            sink.emit(Notice(f"\n[{too_large}]\n"))
        return None
    if sink is not None:
        sink.emit(TurnStateChanged("running"))
    return answer.strip()


def _turn_sink(ctx: ClientPort, session_id: str) -> TurnSink | None:
    """The session's running v2 turn's sink (None: no v2 turn runs)."""
    session = ctx.daemon.registry.live.get(session_id)
    return session.turn_sinks.get(session_id) if session is not None else None


def _over_limit(ctx: ClientPort, answer: str) -> str | None:
    from ..services.message_size import answer_over_limit

    return answer_over_limit(answer, ctx.settings.max_message_mib)


def mcp_form_relay(ctx: ClientPort, session_id: str) -> Elicit:
    """How an MCP server's form (checked: mcp/elicitation.py) is put to this v2 client's user:
    its message prefixed with the server's name (never shown as Tether's own question), the
    server named in `_meta.tether.mcpServer`; the answer `{action, content?}` (the request
    failed, or an answer over `max_message_mib`: `cancel`)."""

    async def relay(server: str, message: str, schema: JsonObject) -> JsonObject:
        from ..tools.visible_text import visible

        params = {
            "mode": "form",
            "sessionId": session_id,
            "message": f"MCP server `{server}` asks: {visible(message)}",
            "requestedSchema": schema,
            "_meta": {"tether": {"mcpServer": server}},
        }
        sink = _turn_sink(ctx, session_id)
        result = await _form(ctx, params, sink)
        if sink is not None:
            sink.emit(TurnStateChanged("running"))  # the call goes on, whatever the answer
        if not isinstance(result, dict):
            return {"action": "cancel"}
        from tether_protocol import dumps_text

        content = result.get("content")
        if content is not None and _over_limit(ctx, dumps_text(content)) is not None:
            return {"action": "cancel"}
        return result

    return relay
