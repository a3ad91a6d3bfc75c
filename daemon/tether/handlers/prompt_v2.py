"""`session/prompt` on an ACP v2 connection: answered at insertion, the outcome as state.

Owns: the v2 lifecycle of a prompt (docs/decisions/0002): held in the queue, answered
`{messageId}` when its turn begins, the turn run on as a task (`user_message`, `state_update`s,
the asker given its sink for `requires_action`); a steered one answered once it landed (§12.7).
Must not: run the turn differently from v1 (`prompt._prompt_turn` does)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether_protocol import (
    PromptParams,
    RequestCancelled,
    SteerOutcome,
    TetherError,
    conversation_blocks,
    dumps_text,
    unstructure,
)
from tether_protocol.peer import RawResult

from ..agent.sink import PromptInserted, TurnStateChanged
from ..rendering import SessionUpdates
from ..rendering.acp_v2_answers import prompt_message_id, steered_message_id
from ..services.child_sessions import refuse_running_child
from ..services.queue import queue_of, steering

if TYPE_CHECKING:
    from ..agent.session import ActiveTurn
    from ..server.context import ClientConnection
    from ..services.live_session import LiveSession


async def session_prompt_v2(ctx: ClientConnection, params: PromptParams, key: str | None) -> RawResult:
    """Hold the prompt until its turn begins, answer with its message id, run the turn. A
    steered one (`_meta.tether.steer`) joins the running turn: answered once it landed.
    ``key``: the prompt's idempotency key (read once, by `prompt.session_prompt`)."""
    from .prompt import _refuse_during_resumed, _refuse_empty, refuse_left_waiting

    _refuse_empty(params.prompt, "session/prompt")
    refuse_running_child(ctx, params.session_id)
    session = ctx.daemon.registry.get_live(params.session_id)
    _refuse_during_resumed(session)
    await refuse_left_waiting(ctx, session)
    queue = queue_of(ctx, session)
    steer: SteerOutcome | None = None
    if steering(params) and queue.can_steer(session):
        wait = await queue.steer(session, params)
        if wait.outcome is not None:  # landed: its id in the running turn, which goes on
            landed = wait.outcome
            return _answer(steered_message_id(landed.turn_id or "", landed.message_seq or 0), landed)
        steer = SteerOutcome(False)  # that turn ended first: it runs as a turn of its own
        handle = await queue.wait_for(session, wait.entry) if wait.entry is not None else None
    else:
        handle = await queue.take_turn(session, params, key)
    if handle is None:  # withdrawn while held (session/cancel, $/cancel_request)
        raise RequestCancelled("request cancelled: the prompt was withdrawn before it was inserted")
    content = conversation_blocks(params.prompt)
    sink = SessionUpdates(session.id, ctx.connection)
    sink.emit(PromptInserted(handle.turn_id, content))
    sink.emit(TurnStateChanged("running"))
    ctx.daemon.tasks.start(f"v2 turn {handle.turn_id}", _run_turn, ctx, session, handle, params, sink)
    return _answer(prompt_message_id(handle.turn_id), steer)


def _answer(message_id: str, steer: SteerOutcome | None) -> RawResult:
    """`{messageId}`, and for a steered prompt where it went (`_meta.tether.steer`, as v1's)."""
    answer: dict[str, object] = {"messageId": message_id}
    if steer is not None:
        answer["_meta"] = {"tether": {"steer": unstructure(steer)}}
    return RawResult(dumps_text(answer))


async def _run_turn(
    ctx: ClientConnection, session: LiveSession, handle: ActiveTurn, params: PromptParams, sink: SessionUpdates
) -> None:
    from .prompt import _prompt_turn

    turn_sinks = session.turn_sinks
    turn_sinks[session.id] = sink
    try:
        result = await _prompt_turn(ctx, session, handle, params, None, sink=sink)
    except TetherError as exc:
        sink.emit(TurnStateChanged("idle", "error", error=exc.to_error()))
    else:
        sink.emit(TurnStateChanged("idle", result.stop_reason))
    finally:
        if turn_sinks.get(session.id) is sink:
            del turn_sinks[session.id]
        sink.flush()
