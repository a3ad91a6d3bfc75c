"""Ask-first's question as an ACP v2 form (`elicitation/create`, SPEC §12.8).

Owns: `clarifier` (the turn's `clarify` for a v2 client that declared `capabilities.elicitation.form`):
the form with one text field, the session's state while it waits (`requires_action`, then `running`),
and reading the answer (one over `max_message_mib` is refused). Must not: decide when to ask
(hooks/ask_first.py) or what the answer does (the turn: agent/loop.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..agent.sink import Notice, TurnStateChanged
from ..transport.rpc import ClientRequestFailed

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ..services.ports import ClientPort

FIELD = "answer"


def clarifier(ctx: ClientPort, session_id: str) -> Callable[[str], Awaitable[str | None]] | None:
    """How this client is asked ask-first's question in a form, or None (it shows none)."""
    client = ctx.client
    if client is None or client.wire_version != 2 or not client.elicitation_form:
        return None

    async def clarify(question: str) -> str | None:
        return await ask_in_form(ctx, session_id, question)

    return clarify


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
    sink = ctx.asker().turn_sinks.get(session_id)  # the v2 turn's (server/prompt_v2.py)
    if sink is not None:
        sink.emit(TurnStateChanged("requires_action"))
    try:
        result = await ctx.rpc.request("elicitation/create", params)
    except ClientRequestFailed:
        return None
    content = result.get("content") if isinstance(result, dict) and result.get("action") == "accept" else None
    answer = content.get(FIELD) if isinstance(content, dict) else None
    if not isinstance(answer, str) or not answer.strip():
        return None
    from ..services.message_size import answer_over_limit

    too_large = answer_over_limit(answer, ctx.settings.max_message_mib)
    if too_large is not None:  # not stored, not sent: the turn ends as an unanswered question does
        if sink is not None:
            sink.emit(Notice(f"\n[{too_large}]\n"))
        return None
    if sink is not None:
        sink.emit(TurnStateChanged("running"))
    return answer.strip()
