"""The session of a stock LSP client's workspace, and the turns it runs in the background.

Owns: `LspFront` (one per connection: a session per workspace root, the running turn), starting
a turn with an `LspWatch` sink, and what is shown at its end (message, log, transcript).
Must not: parse command arguments (`commands.py`) or build prompts (`actions.py`).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from tether_protocol import SessionBusy
from tether_protocol.conversation import TextBlock

from ...agent.session import ActiveTurn
from ...services.queue import queue_of
from ...services.registry import check_workspace
from ...services.turns import make_turn, turn_ended
from ...store import StorageFault, StoreError, new_turn_id
from .transcript import append_turn, transcript_path
from .watch import LspWatch

if TYPE_CHECKING:
    from ...agent.sink import TurnSink
    from ...rendering import SessionUpdates
    from ...server.context import ClientConnection
    from ...services.live_session import LiveSession

log = logging.getLogger("tether.server")

SHOWN_LINES = 3  # of the answer, in window/showMessage
_SHOWN_CHARS = 300


class LspFront:
    """The LSP agent front's state on one connection."""

    def __init__(self) -> None:
        self.sessions: dict[Path, str] = {}  # workspace root -> session id
        self.progress: dict[str, ActiveTurn] = {}  # a running turn's progress token -> the turn


def front_of(ctx: ClientConnection) -> LspFront:
    front = ctx.lsp_front
    if front is None:
        front = ctx.lsp_front = LspFront()
        client = ctx.client
        if client is not None and client.lsp and not client.acp:
            # window/showMessageRequest is part of LSP itself (the capability only describes
            # action items): a client that drives the agent front is asked, and one that
            # answers MethodNotFound is remembered and never asked again (SPEC §3.23)
            client.lsp_show_message_request = True
    return front


def workspace_root(ctx: ClientConnection) -> Path:
    client = ctx.client
    root = client.root if client is not None and client.root is not None else Path(ctx.default_root)
    return Path(root).resolve()


async def session_of(ctx: ClientConnection, *, fresh: bool = False) -> LiveSession:
    """The workspace's session: the one this connection made, else a new one."""
    front = front_of(ctx)
    root = workspace_root(ctx)
    session_id = front.sessions.get(root)
    live = ctx.daemon.registry.live.get(session_id) if session_id and not fresh else None
    if live is not None and not live.closed:
        return live
    made = await ctx.daemon.sessions.create(check_workspace(str(root)), ctx.settings.mode)
    ctx.session_opened.set()
    front.sessions[root] = made.id
    return ctx.daemon.registry.get_live(made.id)  # the registry's (the service answers the agent's view)


def start_turn(ctx: ClientConnection, session: LiveSession, prompt: str) -> str:
    """Start a turn in the background (its progress and answer follow); its id."""
    if session.turn is not None:
        raise SessionBusy(
            f"Tether is already working in session {session.id!r}: wait for it to finish, "
            f"or run the command tether.cancel first"
        )
    handle = ActiveTurn(new_turn_id())
    session.turn = handle  # before the first await: tether.cancel finds it
    client = ctx.client
    watch = LspWatch(
        ctx.rpc,
        progress=bool(client and client.lsp_work_done_progress),
        turn_id=handle.turn_id,
        prompt=prompt,
    )
    front_of(ctx).progress[watch.token] = handle
    ctx.daemon.tasks.start("lsp-turn", _run, ctx, session, handle, watch)
    return handle.turn_id


def cancel_by_progress(ctx: ClientConnection, token: int | str) -> None:
    """`window/workDoneProgress/cancel` of a turn's progress: the turn stops."""
    handle = front_of(ctx).progress.get(str(token))
    if handle is not None:
        handle.cancel()


async def _run(ctx: ClientConnection, session: LiveSession, handle: ActiveTurn, watch: LspWatch) -> None:
    sender = asyncio.get_running_loop().create_task(watch.run())
    stop_reason, error = "error", ""
    sink, windows = _shown_to_windows(ctx, session.id, watch)
    try:
        provider = await ctx.provider()
        outcome = await make_turn(ctx, session, handle, sink, provider).run([TextBlock(watch.record.prompt)])
        stop_reason = outcome.stop_reason
        if outcome.error is not None:
            error = f"the model provider failed: {outcome.error}"
    except (StoreError, StorageFault) as exc:
        error = str(exc)
    except Exception as exc:  # the client has no request to fail: tell the user
        log.exception("LSP turn %s failed", handle.turn_id)
        error = str(getattr(exc, "message", exc))
    finally:
        session.turn = None
        handle.done.set()
        front_of(ctx).progress.pop(watch.token, None)
        queue_of(ctx, session).turn_ended(session, handle)  # a session/prompt queued behind it starts
        if windows is not None:
            windows.flush()
            turn_ended(windows, handle.turn_id, stop_reason)
    await watch.close(stop_reason, sender)
    _tell(ctx, session, watch, stop_reason, error)


def _shown_to_windows(
    ctx: ClientConnection, session_id: str, watch: LspWatch
) -> tuple[TurnSink, SessionUpdates | None]:
    """In the shared daemon, the turn also goes to the windows that have the session open."""
    if not getattr(ctx.connection, "audience", None):
        return watch, None
    from ...shared.watchers import watched

    return watched(ctx.connection, session_id, watch)


def _tell(ctx: ClientConnection, session: LiveSession, watch: LspWatch, stop_reason: str, error: str) -> None:
    """The end of a turn, as the user sees it: a message, the log, the transcript."""
    home = Path(ctx.settings.home) if ctx.settings.home else None
    path: Path | None = None
    try:
        path = transcript_path(session.workspace, session.id, home)
        append_turn(path, session.workspace, session.id, watch.record)
    except (OSError, StorageFault) as exc:
        log.warning("could not write the transcript of %s: %s", session.id, exc)
    answer = watch.answer.strip()
    rpc = ctx.rpc
    if answer or path is not None:
        where = f"\n\n(transcript: {path})" if path is not None else ""
        rpc.notify("window/logMessage", {"type": 3, "message": f"Tether:\n{answer}{where}"})
    rpc.notify(
        "window/showMessage", {"type": 1 if error else 3, "message": short_message(answer, stop_reason, error, path)}
    )
    client = ctx.client
    if path is not None and client is not None and client.lsp_show_document:
        ctx.daemon.tasks.start("lsp-show-transcript", _show, ctx, path)


def short_message(answer: str, stop_reason: str, error: str, path: Path | None) -> str:
    if error:
        return f"Tether: {error}"
    lines = [ln for ln in answer.splitlines() if ln.strip()]
    shown = "\n".join(lines[:SHOWN_LINES])
    if len(shown) > _SHOWN_CHARS:
        shown = shown[: _SHOWN_CHARS - 1] + "…"
    more = len(lines) > SHOWN_LINES or len(shown) < len("\n".join(lines[:SHOWN_LINES]))
    text = f"Tether: {shown or '(no answer)'}"
    if stop_reason != "end_turn":
        text += f"\n(the turn ended: {stop_reason})"
    if more and path is not None:
        text += f"\n… the whole answer is in {path}"
    return text


async def _show(ctx: ClientConnection, path: Path) -> None:
    """Open the transcript beside the code (`takeFocus: false`); no `selection`: an editor
    that still holds an older copy of the file would be pointed past its end."""
    from ...transport.rpc import ClientRequestFailed

    try:
        await ctx.rpc.request("window/showDocument", {"uri": path.as_uri(), "takeFocus": False})
    except ClientRequestFailed as exc:
        log.info("the editor did not open the transcript: %s", exc.error_message)
    except ConnectionError:  # the window went away first: nothing to show it in
        log.info("the editor closed before it opened the transcript")
