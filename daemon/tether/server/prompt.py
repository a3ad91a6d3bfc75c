"""`session/prompt` and `session/cancel` (also `$/cancelRequest` on a prompt).

A prompt resolves with `{stopReason}` after the turn's last update. A cancel — by
`session/cancel` or by `$/cancelRequest` on the prompt's id — always answers
`cancelled`, never an error, even when the turn was already finishing.
A prompt opening with a known `/name` is a slash command, parsed here at the edge
(`commands.py`, SPEC §4.11): it answers without a turn, or runs the turn with its own prompt.
Must not: run the model or tools itself (`AgentTurn` does, built by `turns.make_turn`).
"""

from __future__ import annotations

from typing import cast

from tether_protocol._common import StopReason
from tether_protocol._converter import unstructure
from tether_protocol._errors import (
    ProviderFailed,
    SessionBusy,
    SessionNotFound,
    StorageFailed,
)
from tether_protocol._sessions import (  # the area's module: `_messages` would load every area's
    PromptParams,
    PromptResult,
    PromptResultMeta,
    PromptTetherMeta,
    SessionIdParams,
)
from tether_protocol.conversation import JsonObject, blocks_from_json

from ..agent.loop import TurnOutcome
from ..agent.session import ActiveTurn, AgentSession
from ..store import StorageFault, StoreError, TurnElsewhere, TurnWaiting, new_turn_id
from . import commands, mcp_prompts
from .commands import Expanded
from .context import ServerContext
from .mcp_resources import attach_resources
from .turns import drop_waiting_turn, make_turn
from .updates import SessionUpdates


def _check_free(session: AgentSession) -> None:
    if session.turn is not None and session.turn.resumed:
        raise SessionBusy(
            f"session {session.id!r} is resuming the turn that was waiting for approval when "
            f"a daemon stopped; answer its session/request_permission (or send session/cancel), "
            f"its end comes as a session_info_update with _meta.tether.turnEnded"
        )
    if session.turn is not None:
        raise SessionBusy(
            f"session {session.id!r} is already running a turn; wait for its "
            f"session/prompt answer or send session/cancel first"
        )


async def _run(
    ctx: ServerContext, session: AgentSession, handle: ActiveTurn, sink: SessionUpdates, prompt: Expanded
) -> TurnOutcome:
    """Run the turn; what stops it early, as the error the client gets."""
    provider = await ctx.provider()
    turn = make_turn(ctx, session, handle, sink, provider)
    # the wire's blocks as the conversation's (the stored shape keeps what ACP adds: _meta...)
    blocks = blocks_from_json([unstructure(block) for block in prompt.prompt], "params.prompt")
    blocks = await attach_resources(ctx, session.id, blocks, sink)  # MCP resources the prompt links
    mode = session.mode
    if prompt.mode is not None:
        session.mode = prompt.mode  # this turn only (`/review`: read-only)
    try:
        return await turn.run(blocks)
    except TurnWaiting as exc:
        session.left_waiting = True
        raise SessionBusy(
            f"{exc}: send session/load to see it and be asked again, or session/cancel "
            f"to drop it, then prompt again"
        ) from exc
    except StorageFault as exc:
        raise StorageFailed(
            f"{exc}; the turn stopped there (turn {handle.turn_id}), what was stored before is kept",
            data={"path": exc.path, "turnId": handle.turn_id},
        ) from exc
    except TurnElsewhere as exc:
        raise SessionBusy(
            f"{exc}; answer or cancel it there, or wait until it ends and load the "
            f"session again to see it (turn {exc.turn_id})"
        ) from exc
    except StoreError as exc:
        if await session.store.get_session(session.id) is not None:
            raise
        ctx.registry.live.pop(session.id, None)  # nothing left to prompt
        raise SessionNotFound(
            f"session {session.id!r} was deleted from the workspace's history outside this "
            f"daemon (by `tether sessions delete` or another daemon); start a new one with "
            f"session/new"
        ) from exc
    finally:
        if prompt.mode is not None and session.mode == prompt.mode:
            session.mode = mode


def _provider_failed(outcome: TurnOutcome) -> ProviderFailed:
    assert outcome.error is not None
    data: JsonObject = {  # the error's `data` (wire JSON)
        "turnId": outcome.turn_id,
        "kind": outcome.error.kind,
        "retryable": outcome.error.retryable,
        **({"status": outcome.error.status} if outcome.error.status else {}),
    }
    return ProviderFailed(
        f"the model provider failed: {outcome.error}. What was streamed is kept in "
        f"the session history, marked as an error (turn {outcome.turn_id})",
        data=data,
    )


async def _expand(
    ctx: ServerContext, session: AgentSession, turn_id: str, sink: SessionUpdates, params: PromptParams
) -> Expanded | None:
    """The prompt to run: as sent, or a slash command's (None: the command needed no turn)."""
    known = commands.refresh(sink, session.id, session.workspace)  # the command files, read once
    command = commands.parse(params.prompt, known)
    if command is None:
        return Expanded(list(params.prompt))
    rest = params.prompt[1:]
    if command.name == "mode":
        if await commands.set_mode(session, sink, command.args):
            from tether_protocol._converter import unstructure
            from tether_protocol._updates import ConfigOptionUpdate

            from .config_options import config_options

            sink.update(unstructure(ConfigOptionUpdate(config_options(ctx, session))))  # the "mode" option
    elif command.name == "compact":
        await commands.compact(ctx, session, turn_id, sink, command.args)
    elif command.name == "clear":
        commands.clear(sink)
    elif command.name == "init":
        return commands.init(command.args, rest)
    elif command.name == "review":
        found = await commands.review(session, command.args, rest)
        if found is None:
            sink.notice("\n[/review: there are no uncommitted changes to review (git diff is empty)]\n")
        return found
    elif ":" in command.name:  # an MCP server's prompt
        return await mcp_prompts.expand(ctx, session.id, command, rest, sink)
    else:
        return commands.user_command(command, session.workspace, rest)
    return None


async def session_prompt(ctx: ServerContext, params: PromptParams) -> PromptResult:
    session = ctx.registry.get_live(params.session_id)
    _check_free(session)
    # Registered before the first await, so a cancel sent right behind the prompt
    # finds the turn.
    handle = ActiveTurn(new_turn_id())
    session.turn = handle
    sink = SessionUpdates(session.id, ctx.connection)
    refused = ctx.settings.refused
    if refused and not ctx.told_refused:
        # once per daemon, in the first turn (where every client shows it): an ACP
        # client has no showMessage and drops updates of a session it does not know yet
        ctx.told_refused = True
        sink.notice("\n[" + "; ".join(item.message() for item in refused) + "]\n")
    try:
        expanded = await _expand(ctx, session, handle.turn_id, sink, params)
        if expanded is None:  # a command answered without a turn
            return PromptResult("end_turn")
        outcome = await _run(ctx, session, handle, sink, expanded)
    finally:
        sink.flush()
        session.turn = None
        handle.done.set()
    if outcome.error is not None:
        raise _provider_failed(outcome)
    meta = PromptResultMeta(tether=PromptTetherMeta(turn_id=outcome.turn_id))
    return PromptResult(cast(StopReason, outcome.stop_reason), meta=meta)


def cancel_prompt(ctx: ServerContext, params: PromptParams) -> None:
    """`$/cancelRequest` of a running `session/prompt`: the turn stops, the prompt answers."""
    session = ctx.registry.live.get(params.session_id)
    if session is not None and session.turn is not None:
        session.turn.cancel()


async def session_cancel(ctx: ServerContext, params: SessionIdParams) -> None:
    session = ctx.registry.live.get(params.session_id)
    if session is not None and session.turn is not None:
        session.turn.cancel()
    elif session is not None and session.left_waiting:  # a turn a stopped daemon left waiting
        session.left_waiting = False
        await drop_waiting_turn(ctx, session)
