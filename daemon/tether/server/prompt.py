"""`session/prompt` and `session/cancel` (also `$/cancelRequest` on a prompt).

A prompt resolves with `{stopReason}` after the turn's last update. A cancel — by
`session/cancel` or by `$/cancelRequest` on the prompt's id — always answers
`cancelled`, never an error, even when the turn was already finishing.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether_protocol._converter import unstructure
from tether_protocol._errors import ProviderFailed, SessionBusy, SessionNotFound, StorageFailed
from tether_protocol._messages import PromptParams, SessionIdParams

from ..agent.loop import AgentTurn, TurnServices
from ..agent.session import ActiveTurn
from ..store import StorageFault, StoreError, TurnElsewhere, TurnWaiting, new_turn_id
from ..transport.rpc import Route
from .files import EditorFiles
from .registry import private_paths
from .sessions import drop_waiting_turn
from .updates import SessionUpdates

if TYPE_CHECKING:
    from .app import TetherServer

log = logging.getLogger("tether.server")


def _hidden_paths(server: TetherServer) -> tuple[str, ...]:
    """Paths commands must not read: Tether's user config and its history."""
    home = server.settings.home
    return private_paths(Path(home) if home else None)


def make_turn(server: TetherServer, session: Any, handle: ActiveTurn, sink: SessionUpdates, provider: Any) -> AgentTurn:
    return AgentTurn(
        session,
        handle,
        provider=provider,
        tools=server.tools,
        sink=sink,
        max_steps=server.settings.max_steps,
        keep_user_turns=server.settings.keep_user_turns,
        max_output_tokens=server.settings.max_output_tokens,
        guard_mode=server.settings.guard,
        services=TurnServices(
            gate=server.gate_for(session.workspace, session.store),
            asker=server.asker(),
            files=EditorFiles(
                session_id=session.id,
                sandbox=session.sandbox,
                documents=server.documents,
                client=server.client,
                rpc=server.rpc,
            ),
            documents=server.documents.texts,
            env_allow=server.settings.allow_env,
            sandbox_setting=server.settings.sandbox,
            hidden_paths=_hidden_paths(server),
            terminal_output_meta=bool(server.client and server.client.terminal_output_meta),
        ),
    )


async def resume_turn(server: TetherServer, session: Any, turn_id: str, pending: dict[str, Any]) -> None:
    """Resume a turn a dead daemon left waiting for approval; it has no prompt request to
    answer, so its end is announced with a `session_info_update` (`_meta.tether.turnEnded`)."""
    if session.turn is not None:
        return
    handle = ActiveTurn(turn_id, resumed=True)
    session.turn = handle
    assert server.conn is not None
    sink = SessionUpdates(session.id, server.conn)
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
        provider = await server.provider()
        outcome = await make_turn(server, session, handle, sink, provider).resume(pending)
        stop_reason = outcome.stop_reason
        if outcome.error is not None:
            sink.notice(f"\n[the resumed turn failed: {outcome.error}]\n")
    except Exception as exc:  # tell the user; a resumed turn has no request to fail
        log.warning("resuming turn %s failed: %s", turn_id, exc)
        sink.notice(f"\n[could not resume the turn that was waiting for approval: {getattr(exc, 'message', exc)}]\n")
    finally:
        if not elsewhere:
            sink.update(
                {
                    "sessionUpdate": "session_info_update",
                    "_meta": {"tether": {"turnEnded": {"turnId": turn_id, "stopReason": stop_reason}}},
                }
            )
        sink.flush()
        session.turn = None
        handle.done.set()


def routes(server: TetherServer) -> list[Route]:
    registry = server.registry

    async def prompt(params: PromptParams) -> dict[str, Any]:
        session = registry.get_live(params.session_id)
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
        # Registered before the first await, so a cancel sent right behind the prompt
        # finds the turn.
        handle = ActiveTurn(new_turn_id())
        session.turn = handle
        assert server.conn is not None
        sink = SessionUpdates(session.id, server.conn)
        refused = server.settings.refused
        if refused and not server.told_refused:
            # once per daemon, in the first turn (where every client shows it): an ACP
            # client has no showMessage and drops updates of a session it does not know yet
            server.told_refused = True
            sink.notice("\n[" + "; ".join(item.message() for item in refused) + "]\n")
        try:
            provider = await server.provider()
            turn = make_turn(server, session, handle, sink, provider)
            blocks = [unstructure(block) for block in params.prompt]
            try:
                outcome = await turn.run(blocks)
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
                registry.live.pop(session.id, None)  # nothing left to prompt
                raise SessionNotFound(
                    f"session {session.id!r} was deleted from the workspace's history outside this "
                    f"daemon (by `tether sessions delete` or another daemon); start a new one with "
                    f"session/new"
                ) from exc
        finally:
            sink.flush()
            session.turn = None
            handle.done.set()
        if outcome.error is not None:
            raise ProviderFailed(
                f"the model provider failed: {outcome.error}. What was streamed is kept in "
                f"the session history, marked as an error (turn {outcome.turn_id})",
                data={
                    "turnId": outcome.turn_id,
                    "kind": outcome.error.kind,
                    "retryable": outcome.error.retryable,
                    **({"status": outcome.error.status} if outcome.error.status else {}),
                },
            )
        return {"stopReason": outcome.stop_reason, "_meta": {"tether": {"turnId": outcome.turn_id}}}

    def cancel_prompt(params: PromptParams) -> None:
        session = registry.live.get(params.session_id)
        if session is not None and session.turn is not None:
            session.turn.cancel()

    async def cancel(params: SessionIdParams) -> None:
        session = registry.live.get(params.session_id)
        if session is not None and session.turn is not None:
            session.turn.cancel()
        elif session is not None and session.left_waiting:  # a turn a stopped daemon left waiting
            session.left_waiting = False
            await drop_waiting_turn(server, session)

    return [
        Route("session/prompt", prompt, PromptParams, on_cancel=cancel_prompt),
        Route("session/cancel", cancel, SessionIdParams, notification=True),
    ]
