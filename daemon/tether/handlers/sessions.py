"""`session/new|list|close|delete|set_mode` (loading a stored session is `loading.py`).

Owns: their handlers; nothing is sent for a session before its `session/new` answer, then
the command list (`commands_after_answer`).
Must not: run turns, replay history, touch SQL, or import the turn, the replay or the tools
(it is on the start path).
"""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

from tether_protocol import (
    EmptyResult,
    InvalidParams,
    JsonObject,
    ListSessionsParams,
    ListSessionsResult,
    NewSessionParams,
    NewSessionResult,
    SessionIdParams,
    SessionInfo,
    SessionMode,
    SessionModeState,
    SetModeParams,
)
from tether_protocol.peer import RawResult

from ..config.settings import MODE_CHOICES
from ..services.config_options import config_options, send_update, set_mode
from ..services.mcp_servers import check_acp_servers, keep_acp_servers, session_closed, start_in_background
from ..services.registry import check_workspace
from ..store import InvalidCursor

if TYPE_CHECKING:
    from ..server.context import ClientConnection


def iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat().replace("+00:00", "Z")


def modes(current: str) -> SessionModeState:
    """The modes a session can be in, and the one it is in."""
    return SessionModeState(
        current_mode_id=current,  # type: ignore[arg-type]  # a mode id (config checks it)
        available_modes=[SessionMode(mode_id, name, description) for mode_id, name, description in MODE_CHOICES],  # type: ignore[arg-type]
    )


async def session_new(ctx: ClientConnection, params: NewSessionParams) -> NewSessionResult | RawResult:
    workspace = check_workspace(params.cwd)
    servers = check_acp_servers("session/new", params.mcp_servers)
    session = await ctx.daemon.sessions.create(workspace, ctx.settings.mode)
    keep_acp_servers(ctx, "session/new", session.id, workspace, servers)
    start_in_background(ctx, session.id)
    ctx.session_opened.set()
    commands_after_answer(ctx, session.id, session.workspace)
    result = NewSessionResult(session.id, modes(session.mode), config_options(ctx, session))
    if getattr(ctx.connection, "protocol_version", 1) == 2:  # v2 names (updates/acp_v2.py)
        from tether_protocol import dumps_text, unstructure

        from ..rendering.acp_v2_answers import new_session_result

        return RawResult(dumps_text(new_session_result(unstructure(result))))
    return result


def commands_after_answer(ctx: ClientConnection, session_id: str, workspace: Path) -> None:
    """The slash command list (`available_commands_update`), sent after the answer being
    returned: the answer is queued when the handler returns and flushed by the next
    callback, so this runs one callback later (`commands` imports the update layer, which
    the start path does not load before the answer is written)."""
    loop = asyncio.get_running_loop()

    def send() -> None:
        from ..services.commands import send_available

        send_available(ctx, session_id, workspace)

    loop.call_soon(loop.call_soon, send)


async def session_list(ctx: ClientConnection, params: ListSessionsParams) -> ListSessionsResult:
    workspace = check_workspace(params.cwd) if params.cwd else Path(ctx.default_root)
    try:
        records, cursor = await ctx.daemon.sessions.list(
            workspace.resolve(),
            params.cursor,
            include_empty=_asked(params.meta, "includeEmpty"),
            include_children=_asked(params.meta, "includeChildren"),
        )
    except InvalidCursor as exc:
        raise InvalidParams(f"invalid params for session/list: params.cursor: {exc}") from exc
    # an untitled session has no "title" at all (None is omitted), never "title": null
    return ListSessionsResult(
        [SessionInfo(r.id, r.workspace, iso(r.updated_at), r.title, _parent(r.metadata)) for r in records],
        next_cursor=cursor or None,
    )


def _parent(metadata: JsonObject) -> JsonObject | None:
    """A sub-agent's session (agent/subagent.py): the session and call it ran under."""
    if not isinstance(metadata.get("parentSessionId"), str):
        return None
    return {"tether": {k: metadata[k] for k in ("parentSessionId", "parentCallId") if k in metadata}}


def _asked(meta: JsonObject | None, flag: str) -> bool:
    """`_meta.tether.includeEmpty: true` lists sessions never prompted too, `includeChildren:
    true` sub-agents' sessions (SPEC §3.8)."""
    tether = (meta or {}).get("tether")
    return isinstance(tether, dict) and tether.get(flag) is True


async def session_close(ctx: ClientConnection, params: SessionIdParams) -> EmptyResult:
    session = ctx.daemon.registry.get_live(params.session_id)
    await ctx.daemon.sessions.stop_live(session.id)
    session.closed = True
    await session_closed(ctx, session.id)  # its client's MCP servers stop
    return EmptyResult()


async def session_delete(ctx: ClientConnection, params: SessionIdParams) -> EmptyResult:
    from ..services.child_sessions import refuse_running_child  # (the turn's modules: not on the start path)

    refuse_running_child(ctx, params.session_id)  # its turn runs under its parent's call: not taken from under it
    live = params.session_id in ctx.daemon.registry.live
    default = ctx.default_root if live else check_workspace(str(ctx.default_root))
    await ctx.daemon.sessions.delete(params.session_id, Path(default))
    return EmptyResult()


async def session_set_mode(ctx: ClientConnection, params: SetModeParams) -> EmptyResult:
    session = ctx.daemon.registry.get_live(params.session_id)
    await set_mode(session, params.mode_id)
    from tether_protocol import ConfigOptionUpdate  # not on the start path (22 classes)

    send_update(ctx, session, ConfigOptionUpdate(config_options(ctx, session)))  # the "mode" option changed
    return EmptyResult()
