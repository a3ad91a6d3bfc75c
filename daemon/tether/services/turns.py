"""Building a turn for a session, and the turns a stopped daemon left waiting for approval.

Owns: `make_turn` (an `AgentTurn` wired to the context's services, `delegate` when on), the child
views of a turn, `resume_turn` (after `session/load`), `say_turn_waits` (after `session/resume`)
and `drop_waiting_turn` (`session/cancel` of such a turn).
Must not: answer requests (`prompt.py`, `sessions.py` do) or run the model itself.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from tether_protocol.conversation import ToolResultMessage

from ..agent.hook_port import NO_HOOKS
from ..agent.loop import AgentTurn, TurnServices
from ..agent.session import ActiveTurn, AgentSession
from ..agent.sink import TurnEnded, TurnEvent, TurnSink
from ..agent.subagent import ChildViews, DelegateLimits, SubAgents
from ..rendering import SessionUpdates
from ..store import MessageRecord
from .mcp_servers import turn_tools
from .queue import queue_of
from .registry import private_paths
from .turn_setup import keep_services, turn_provider, turn_setup

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tether_protocol import PendingApprovals

    from ..agent.hook_port import HookPort
    from ..approvals import Asker
    from ..netproxy.asking import AskDomain
    from ..netproxy.proxy import ProxyRules
    from ..providers.base import Provider
    from ..transport.connection import Connection
    from .live_session import LiveSession
    from .ports import ClientPort, SettingsHost
    from .turn_setup import TurnSetup

log = logging.getLogger("tether.server")

# After `session/resume` of a session whose turn a stopped daemon left waiting for approval
WAITING_NOTICE = (
    "a turn of this session was left waiting for approval when a Tether process stopped: "
    "session/load shows it and asks again; session/cancel drops it"
)
_DROPPED = "not run: the turn was cancelled while this call waited for approval"
_DROPPED_STARTED = (
    "cancelled: it was approved and had started when Tether stopped, so it may have run "
    "(check what it does before running it again)"
)


def hidden_paths(ctx: SettingsHost) -> tuple[str, ...]:
    """Paths commands must not read: Tether's user config and its history, the credential
    stores (after `allow_read` and `deny_read`) and the token files (hidden whole where
    no filtered copy is shown: `read_paths`)."""
    return read_paths(ctx)[0]


def read_paths(ctx: SettingsHost) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """`hidden_paths`, and the token files a command may read without their credential lines."""
    import os

    from ..sandbox.credential_stores import read_limits

    settings = ctx.settings
    limits = read_limits(os.environ, (*settings.deny_read, *settings.workspace_deny_read), settings.allow_read)
    own = private_paths(Path(settings.home) if settings.home else None)
    return (*own, *[store.path for store in limits.hidden], *limits.filtered), limits.filtered


def make_turn(
    ctx: ClientPort, session: AgentSession, handle: ActiveTurn, sink: TurnSink, provider: Provider
) -> AgentTurn:
    settings = ctx.settings
    setup = turn_setup(ctx, session, handle.turn_id)
    services = turn_services(ctx, session, handle.turn_id, sink, provider, setup)
    tools = setup.wiring.turn_tools  # the daemon's, and `delegate` when on

    def sub_agents() -> SubAgents:  # a `delegate` call's (agent/subagent.py): a turn without one builds none
        limits = DelegateLimits(
            settings.delegate_max_steps,
            settings.delegate_tokens,
            settings.keep_user_turns,
            settings.max_output_tokens,
            settings.guard,
        )
        own = setup.wiring.tools  # a child gets the daemon's tools, never `delegate`
        views = child_views(ctx, sink, session.id)
        return SubAgents(
            session,
            handle,
            provider=provider,
            tools=own,
            sink=sink,
            services=services,
            limits=limits,
            child_views=views,
        )

    return AgentTurn(
        session,
        handle,
        provider=provider,
        # with the session's MCP servers' tools, where it has any (their specs can change)
        tools=turn_tools(ctx, session.id, sink, tools) if setup.mcp else tools,
        sink=sink,
        max_steps=settings.max_steps,
        keep_user_turns=settings.keep_user_turns,
        max_output_tokens=settings.max_output_tokens,
        guard_mode=settings.guard,
        services=services,
        tool_specs=None if setup.mcp else setup.wiring.specs,
        sub_agents=sub_agents if tools is not setup.wiring.tools else None,
        sanitizer=setup.sanitizer,
        parts=setup.parts,
    )


def child_views(ctx: ClientPort, parent: TurnSink, parent_id: str) -> ChildViews:
    """How `SubAgents` shows a child on its own id (services/child_sessions.py, imported by the
    first `delegate` call: a turn without one does not cross it)."""

    def view(child_id: str, call_id: str, joining: object = None, past: Sequence[TurnEvent] = ()) -> TurnSink | None:
        from .child_sessions import child_view

        return child_view(ctx, parent, parent_id, child_id, call_id, joining=joining, past=past)

    return view


def turn_services(
    ctx: ClientPort,
    session: AgentSession,
    turn_id: str,
    sink: TurnSink,
    provider: Provider,
    setup: TurnSetup | None = None,
) -> TurnServices:
    """What a turn's tools ask, write and hook with (a `/compact` uses them too): the session's
    setup keeps them for the connection when no part is the turn's own (hooks, ask-first and
    the reviewer hold the turn; an allowlist's rules read the domains allowed always)."""
    settings = ctx.settings
    if setup is None:  # the session's, built again when an input changed
        setup = turn_setup(ctx, session, turn_id)
    if setup.wiring.services is not None:
        return setup.wiring.services
    port: HookPort = NO_HOOKS
    asker: Asker = ctx.asker()
    ask_first = False
    if setup.wired:  # hooks, the reviewer or ask-first are configured
        from ..hooks.setup import turn_hooks

        hooked = turn_hooks(settings, setup.hooks, session, turn_id, sink, provider, asker, setup.hidden)
        port, asker, ask_first = hooked.port, hooked.asker, hooked.ask_first
    services = TurnServices(
        gate=setup.wiring.gate,
        asker=asker,
        files=setup.wiring.file_io,
        documents=ctx.documents.texts,
        env_allow=settings.allow_env,
        checkpoint_max_bytes=settings.checkpoint_max_kib * 1024,
        sandbox_setting=settings.sandbox,
        hidden_paths=setup.hidden,
        filtered_paths=setup.filtered,
        mask_secrets=settings.mask_secrets == "on",
        unix_sockets=settings.allow_unix_sockets,
        net_rules=_net_rules(ctx, session, setup.home) if settings.network == "allowlist" else None,
        terminal_output_meta=bool(ctx.client and ctx.client.terminal_output_meta),
        memory_tokens=settings.memory_tokens if settings.memory == "on" else 0,
        hooks=port,
        ask_first=ask_first,
        clarify=ctx.clarifier(session.id) if ask_first else None,  # a v2 form, where shown
        elicit=ctx.form_relay(session.id),  # an MCP server's form, where shown
        instructions=setup.instructions,
    )
    if not setup.wired and settings.network != "allowlist":
        keep_services(session, setup, services)
    return services


def _net_rules(ctx: ClientPort, session: AgentSession, home: Path) -> ProxyRules:
    """The proxy's rules for this turn's commands: the user's domains, those they allowed
    always and for this session, credentials; asking through the client when it is ACP."""
    import dataclasses
    from functools import partial

    from ..netproxy.asking import always_allowed, remember_always
    from ..netproxy.proxy import proxy_rules  # only in `allowlist` mode

    settings = ctx.settings
    rules = proxy_rules((*settings.allowed_domains, *always_allowed(home)), settings.credentials)
    acp = ctx.client is not None and ctx.client.acp
    return dataclasses.replace(
        rules,
        session_domains=session.allowed_domains,
        remember=partial(remember_always, home),
        ask_for=partial(_ask_for, ctx, session) if acp else None,
    )


def _ask_for(ctx: ClientPort, session: AgentSession, call_id: str, command: str) -> AskDomain | None:
    """Asking about a refused host for one command, where the session's mode asks anyway."""
    from ..netproxy.asking import ask_through

    return ask_through(ctx.rpc, session.id, call_id, command) if session.mode in ("ask", "auto-edit") else None


def turn_ended(sink: SessionUpdates, turn_id: str, stop_reason: str) -> None:
    sink.emit(TurnEnded(turn_id, stop_reason))  # the update layer renders it


async def resume_turn(ctx: ClientPort, session: LiveSession, turn_id: str, pending: PendingApprovals) -> None:
    """Resume a turn a dead daemon left waiting for approval; it has no prompt request to
    answer, so its end is announced with a `session_info_update` (`_meta.tether.turnEnded`)."""
    if session.turn is not None:
        return
    handle = ActiveTurn(turn_id, resumed=True)
    session.turn = handle
    sink = SessionUpdates(session.id, ctx.connection)
    turn_sinks = session.turn_sinks  # ACP v2: `requires_action`, then `running`, around its approval
    turn_sinks[session.id] = sink
    stop_reason = "error"
    elsewhere = False  # another daemon that loaded the session resumes it
    try:
        if not await session.store.claim_turn(turn_id):
            elsewhere = True
            sink.notice(
                "\n[the turn waiting for approval is being resumed by another Tether process: "
                "answer its approval there]\n"
            )
            return
        provider = await turn_provider(ctx, session, turn_id)
        outcome = await make_turn(ctx, session, handle, sink, provider).resume(pending)
        stop_reason = outcome.stop_reason
        if outcome.error is not None:
            sink.notice(f"\n[the resumed turn failed: {outcome.error}]\n")
    except Exception as exc:  # tell the user; a resumed turn has no request to fail
        log.warning("resuming turn %s failed: %s", turn_id, exc)
        sink.notice(f"\n[could not resume the turn that was waiting for approval: {getattr(exc, 'message', exc)}]\n")
    finally:
        if not elsewhere:
            turn_ended(sink, turn_id, stop_reason)
        sink.flush()
        if turn_sinks.get(session.id) is sink:
            del turn_sinks[session.id]
        session.turn = None
        handle.done.set()
        queue_of(ctx, session).turn_ended(session, handle)  # the prompts sent while it ran start now


def say_turn_waits(conn: Connection, session_id: str, turn_id: str) -> None:
    sink = SessionUpdates(session_id, conn)
    sink.notice(f"\n[{WAITING_NOTICE} (turn {turn_id})]\n")
    sink.flush()


async def drop_waiting_turn(ctx: ClientPort, session: AgentSession) -> bool:
    """`session/cancel` of a session with no turn running here whose turn a stopped daemon
    left waiting for approval (after `session/resume`): the turn ends `cancelled`, each
    call still to run gets a failed result (so the conversation stays paired), the client
    gets those results and `turnEnded`. Whether there was such a turn."""
    store = session.store
    waiting = await store.waiting_turn(session.id)
    if waiting is None:
        return False
    turn_id, pending = waiting
    results = {c.id: _DROPPED_STARTED if c.started else _DROPPED for c in pending.calls}
    records = [MessageRecord.of(ToolResultMessage(c.id, c.name, results[c.id], is_error=True)) for c in pending.calls]
    if not await store.cancel_waiting(session.id, turn_id, records):
        return False
    if ctx.daemon.registry.live.get(session.id) is session and session.turn is None:
        # the model's view had "result missing" stand-ins for these calls
        await ctx.daemon.registry.revive(session.id, session.workspace)
    sink = SessionUpdates(session.id, ctx.connection)
    for call_id, text in results.items():
        sink.tool_call_update(call_id, status="failed", content_text=text)
    turn_ended(sink, turn_id, "cancelled")
    sink.flush()
    return True
