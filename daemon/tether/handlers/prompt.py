"""`session/prompt` and `session/cancel` (also `$/cancelRequest` on a prompt).

Owns: answering `{stopReason}` after the turn's last update, queueing or steering a prompt while a
turn runs (`queue.py`, SPEC §3.37), a cancel that always answers `cancelled`, parsing a slash command
at the edge (`commands.py`, SPEC §4.11), asking each check whether it applies before calling it.
Must not: run the model or tools itself (`AgentTurn` does, built by `turns.make_turn`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from tether_protocol import (  # the area's module: `_messages` would load every area's
    InvalidParams,
    PromptParams,
    PromptResult,
    SessionBusy,
    SessionIdParams,
    SessionNotFound,
    SteerOutcome,
    SteerParams,
    StopReason,
    StorageFailed,
    TextContent,
    conversation_blocks,
)
from tether_protocol.conversation import ResourceLink

from ..rendering import SessionUpdates
from ..services import commands, mcp_prompts, memory_command
from ..services.child_sessions import refuse_running_child
from ..services.commands import Expanded
from ..services.mcp_resources import attach_resources
from ..services.message_size import BLOCK_BYTES, MIB, refuse_oversized
from ..services.prompt_keys import idempotency_key as key_of
from ..services.prompt_keys import turn_meta
from ..services.queue import queue_of, steering
from ..services.turn_setup import turn_provider, turn_setup
from ..services.turns import drop_waiting_turn, make_turn
from ..store import StorageFault, StoreError, TurnElsewhere, TurnWaiting

if TYPE_CHECKING:
    from collections.abc import Sequence, Sized

    from tether_protocol import ContentBlock
    from tether_protocol.peer import RawResult

    from ..agent.loop import TurnOutcome
    from ..agent.session import ActiveTurn, AgentSession
    from ..server.context import ClientConnection
    from ..services.live_session import LiveSession


def _refuse_during_resumed(session: AgentSession) -> None:
    """A turn resumed after a restart has no prompt request to answer and waits for an
    approval the user may not have seen: a prompt is refused (not queued) and told why."""
    if session.turn is not None and session.turn.resumed:
        raise SessionBusy(
            f"session {session.id!r} is resuming the turn that was waiting for approval when "
            f"a daemon stopped; answer its session/request_permission (or send session/cancel), "
            f"its end comes as a session_info_update with _meta.tether.turnEnded"
        )


def _left_waiting(ctx: ClientConnection, exc: TurnWaiting) -> SessionBusy:
    """The refusal of a prompt while a stopped daemon's turn waits for approval: how on."""
    load = (  # v2 has no session/load (SPEC §12.9)
        'session/resume with replayFrom {"type": "start"}'
        if getattr(ctx.connection, "protocol_version", 1) == 2
        else "session/load"
    )
    return SessionBusy(
        f"{exc}: send {load} to see it and be asked again, or session/cancel to drop it, then prompt again"
    )


async def refuse_left_waiting(ctx: ClientConnection, session: AgentSession) -> None:
    """Before a v2 prompt is answered (at insertion): refused, not answered and then
    failed, while the session still has a turn a stopped daemon left waiting."""
    if not session.left_waiting or session.turn is not None:
        return
    waiting = await session.store.waiting_turn(session.id)
    if waiting is None:
        session.left_waiting = False  # dropped or answered meanwhile (another daemon)
        return
    raise _left_waiting(ctx, TurnWaiting(session.id, waiting[0]))


async def _run(
    ctx: ClientConnection,
    session: AgentSession,
    handle: ActiveTurn,
    sink: SessionUpdates,
    command: Expanded | None,
    typed: PromptParams,
) -> TurnOutcome:
    """Run the turn (``command``: a slash command's prompt, None: the prompt as sent); what
    stops it early, as the error the client gets."""
    provider = await turn_provider(ctx, session, handle.turn_id)
    turn = make_turn(ctx, session, handle, sink, provider)
    prompt = typed.prompt if command is None else command.prompt
    blocks = conversation_blocks(prompt)  # the wire's blocks as the conversation's, in one step
    # a command's expansion is titled with what the user typed (`/fix-issue 12`), not its text
    expanded = command is not None and command.prompt != list(typed.prompt)
    title_from = conversation_blocks(typed.prompt) if expanded else ()
    if any(isinstance(block, ResourceLink) for block in blocks):  # MCP resources the prompt links
        blocks = await attach_resources(ctx, session.id, blocks, sink)
    mode = session.mode
    turn_mode = command.mode if command is not None else None
    if turn_mode is not None:
        session.mode = turn_mode  # this turn only (`/review`: read-only)
    try:
        return await turn.run(blocks, typed=title_from)
    except TurnWaiting as exc:
        session.left_waiting = True
        raise _left_waiting(ctx, exc) from exc
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
        ctx.daemon.registry.end_live(session.id)  # nothing left to prompt
        raise SessionNotFound(
            f"session {session.id!r} was deleted from the workspace's history outside this "
            f"daemon (by `tether sessions delete` or another daemon); start a new one with "
            f"session/new"
        ) from exc
    finally:
        if turn_mode is not None and session.mode == turn_mode:
            session.mode = mode


async def _take_in_rewinds(ctx: ClientConnection, session: LiveSession) -> None:
    """A rewind or a turn made outside this daemon (`tether sessions rewind`, a second daemon) since the
    session's last check is read in, so the model sees it: asked only when SQLite's
    `data_version` says another connection wrote since (this daemon's own rewinds read the
    conversation in as they are made: sessions_service.py)."""
    version = await session.store.data_version()
    if version != session.history_version or session.read_while_child_ran:
        await ctx.daemon.sessions.sync_rewinds(session)
        session.history_version = version  # read before the check: a later write is seen next time


def _commands_told(ctx: ClientConnection, session: LiveSession, turn_id: str, sink: SessionUpdates) -> None:
    """The session's commands are sent again when a command file or its MCP servers' prompts
    changed since they were last sent (the setup reads the files again when one changed)."""
    read = (turn_setup(ctx, session, turn_id).commands, session.prompt_commands)
    if session.commands_read != read:
        commands.refresh(sink, session, read[0])
        session.commands_read = read


def _may_be_command(prompt: Sequence[ContentBlock]) -> bool:
    """Whether the prompt starts with a `/` (only then is it parsed as a slash command)."""
    first = prompt[0]
    return isinstance(first, TextContent) and first.text.lstrip().startswith("/")


async def _expand(
    ctx: ClientConnection, session: LiveSession, turn_id: str, sink: SessionUpdates, params: PromptParams
) -> Expanded | None:
    """The prompt to run: as sent, or a slash command's (None: the command needed no turn)."""
    command = commands.parse(params.prompt, session.commands_sent or ())
    if command is None:
        return Expanded(list(params.prompt))
    rest = params.prompt[1:]
    if command.name == "mode":
        if await commands.set_mode(session, sink, command.args):
            from tether_protocol import ConfigOptionUpdate, unstructure

            from ..services.config_options import config_options

            sink.update(unstructure(ConfigOptionUpdate(config_options(ctx, session))))  # the "mode" option
    elif command.name == "compact":
        await commands.compact(ctx, session, turn_id, sink, command.args)
    elif command.name == "model":
        await commands.set_model(ctx, session, sink, command.args)
    elif command.name == "clear":
        await commands.clear(ctx, session, sink)
    elif command.name == "mcp":
        from ..services.mcp_servers import servers_report

        sink.notice(f"\n{servers_report(ctx, session.id)}\n")
    elif command.name == "memory":
        await memory_command.memory(ctx, session, turn_id, sink, command.args)
    elif command.name == "init":
        return commands.init(command.args, rest)
    elif command.name == "review":
        found = await commands.review(ctx, session, command.args, rest)
        if found is None:
            sink.notice("\n[/review: there are no uncommitted changes to review (git diff is empty)]\n")
        return found
    elif ":" in command.name:  # an MCP server's prompt
        return await mcp_prompts.expand(ctx, session.id, command, rest, sink)
    else:
        return commands.user_command(command, session.workspace, rest)
    return None


def _may_be_oversized(prompt: Sequence[ContentBlock], limit_mib: int) -> bool:
    """Whether the prompt could be over the size cap (only then is it measured: message_size.py).
    Plain text blocks are under it when four bytes a character (UTF-8's most) and each
    block's `BLOCK_BYTES` fit; any other block, or a `_meta`, is measured."""
    room = limit_mib * MIB - len(prompt) * BLOCK_BYTES
    for block in prompt:
        if not isinstance(block, TextContent) or block.meta:
            return True
        room -= 4 * len(block.text)
    return room < 0


def _refuse_empty(prompt: Sized, method: str) -> None:
    """An empty prompt is refused before anything is stored or the model is called."""
    if not prompt:
        raise InvalidParams(
            f"invalid params for {method}: prompt is an empty list; send at least one content "
            'block, e.g. [{"type": "text", "text": "..."}]'
        )


async def session_prompt(ctx: ClientConnection, params: PromptParams) -> PromptResult | RawResult:
    """A prompt: its turn now, or queued behind the running one (answered when its own
    turn ends); with `_meta.tether.steer: true` and a turn running, it joins that turn.
    With an idempotency key, a retry gets the first request's answer (prompt_keys.py). The
    session's other connections are told the turn ended (they sent no request it answers)."""
    from ..services.prompt_keys import prompt_once

    if _may_be_oversized(params.prompt, ctx.settings.max_message_mib):  # measured before a key is taken
        refuse_oversized(params.prompt, ctx.settings.max_message_mib, "session/prompt")
    # read once (the queue takes it with the turn); without either field there is none to read
    key = key_of(params) if params.idempotency_key is not None or params.meta else None
    if key is not None and not steering(params):
        result = await prompt_once(ctx, params, key, _session_prompt)
    else:
        result = await _session_prompt(ctx, params, key)
    live = ctx.daemon.registry.live.get(params.session_id)
    if live is not None and any(conn is not ctx.conn for conn in live.audience):  # other windows see it
        from ..server.audience import turn_ended_elsewhere

        turn_ended_elsewhere(ctx, live, result)
    return result


async def _session_prompt(ctx: ClientConnection, params: PromptParams, key: str | None) -> PromptResult | RawResult:
    if getattr(ctx.connection, "protocol_version", 1) == 2:  # answered at insertion (prompt_v2.py)
        from .prompt_v2 import session_prompt_v2

        return await session_prompt_v2(ctx, params, key)
    _refuse_empty(params.prompt, "session/prompt")
    live = ctx.daemon.registry.live
    if any(s.turn is not None and s.turn.children for s in live.values()):  # a sub-agent runs somewhere
        refuse_running_child(ctx, params.session_id)
    session = ctx.daemon.registry.get_live(params.session_id)
    _refuse_during_resumed(session)
    queue = queue_of(ctx, session)
    steer: SteerOutcome | None = None
    if params.meta and steering(params) and queue.can_steer(session):
        wait = await queue.steer(session, params)
        if wait.outcome is not None:  # landed: answered now, the turn goes on
            return PromptResult("end_turn", meta=await turn_meta(session, wait.outcome.turn_id or "", wait.outcome))
        if wait.entry is None:  # withdrawn
            return PromptResult("cancelled")
        steer = SteerOutcome(False)
        handle = await queue.wait_for(session, wait.entry)
    else:
        handle = await queue.take_turn(session, params, key)
    if handle is None:  # withdrawn from the queue
        return PromptResult("cancelled")
    return await _prompt_turn(ctx, session, handle, params, steer)


async def _prompt_turn(
    ctx: ClientConnection,
    session: LiveSession,
    handle: ActiveTurn,
    params: PromptParams,
    steer: SteerOutcome | None,
    *,
    sink: SessionUpdates | None = None,
) -> PromptResult:
    """Run the prompt's turn on the session it holds (``handle``), then hand the session to
    the next queued prompt (``sink``: the v2 turn's, which has shown the prompt)."""
    queue = queue_of(ctx, session)
    sink = sink or SessionUpdates(session.id, ctx.connection)
    queue.sink = sink
    # a refused `[hooks]` table is told by the hooks' own notice (hooks/config.py), with how to trust it
    refused = [item for item in ctx.settings.refused if item.key != "hooks"]
    if refused and not ctx.told_refused:
        # once per daemon, in the first turn (where every client shows it): an ACP
        # client has no showMessage and drops updates of a session it does not know yet
        ctx.told_refused = True
        sink.notice("\n[" + "; ".join(item.message() for item in refused) + "]\n")
    try:
        await _take_in_rewinds(ctx, session)
        _commands_told(ctx, session, handle.turn_id, sink)
        expanded = None
        if _may_be_command(params.prompt):
            expanded = await _expand(ctx, session, handle.turn_id, sink, params)
            if expanded is None:  # a command answered without a turn
                return PromptResult("end_turn")
        outcome = await _run(ctx, session, handle, sink, expanded, params)
        # as this turn left it (not the latest rewind: one a shell made after this turn's check is still to come)
        await ctx.daemon.registry.note_stored(session)
    finally:
        sink.flush()
        session.turn = None
        handle.done.set()
        queue.turn_ended(session, handle)
    failure = outcome.failure()
    if failure is not None:
        raise failure
    return PromptResult(cast("StopReason", outcome.stop_reason), meta=await turn_meta(session, outcome.turn_id, steer))


async def session_steer(ctx: ClientConnection, params: SteerParams) -> PromptResult | RawResult:
    """`_tether/session/steer`: `session/prompt` with `_meta.tether.steer: true`."""
    _refuse_empty(params.prompt, "_tether/session/steer")
    refuse_oversized(params.prompt, ctx.settings.max_message_mib, "_tether/session/steer")
    meta = {**(params.meta or {}), "tether": {**((params.meta or {}).get("tether") or {}), "steer": True}}
    return await session_prompt(ctx, PromptParams(params.session_id, params.prompt, meta=meta))


def cancel_prompt(ctx: ClientConnection, params: PromptParams) -> None:
    """`$/cancelRequest` of a `session/prompt`: a queued (or steering) one is withdrawn;
    the running one's turn stops. Either answers `cancelled`."""
    session = ctx.daemon.registry.live.get(params.session_id)
    if session is None or queue_of(ctx, session).cancel_request(session, params):
        return
    if session.turn is not None and queue_of(ctx, session).current is params:
        session.turn.cancel()


async def session_cancel(ctx: ClientConnection, params: SessionIdParams) -> None:
    """The running turn stops; the queued prompts then start, or with
    `_meta.tether.cancelQueued: true` are withdrawn too (answered `cancelled`)."""
    session = ctx.daemon.registry.live.get(params.session_id)
    if session is None:  # a running sub-agent's own session (ACP v2): only its turn stops
        from ..services.child_sessions import cancel_child

        cancel_child(ctx, params.session_id)
        return
    tether = (params.meta or {}).get("tether")
    if session is not None and isinstance(tether, dict) and tether.get("cancelQueued") is True:
        queue_of(ctx, session).withdraw_all(session)
    if session is not None and session.turn is not None:
        session.turn.cancel()
    elif session is not None and session.left_waiting:  # a turn a stopped daemon left waiting
        session.left_waiting = False
        await drop_waiting_turn(ctx, session)
