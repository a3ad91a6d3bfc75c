"""`ChatApp`: the interactive chat, from the first prompt to the exit.

Owns: the chat's state, what each key does to it, each prompt's end line, moving finished
text to the scrollback, and holding what is sent before the session is open.
Must not: import the daemon (`tether.*`), or send a prompt while a turn the daemon resumed
on load runs (it answers -32010 and takes no queue: messages are held until it ends).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from prompt_toolkit.application import Application, run_in_terminal
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.output import ColorDepth, Output, create_output
from prompt_toolkit.output.vt100 import Vt100_Output
from prompt_toolkit.styles import Style

from . import sessions
from .approval import Approval
from .complete import ChatCompleter
from .daemon import Daemon, DaemonGone
from .layout import all_keys, build_layout, fit_status
from .outbox import Outbox
from .render import Painter, Transcript
from .wire import DaemonError, JsonObject

if TYPE_CHECKING:
    from pathlib import Path

    from prompt_toolkit.input import Input

    from tether_client import PromptTurn

_QUIT_WINDOW_S = 2.0
_WORKING = "working… Ctrl-C cancels · Enter queues · Ctrl-S steers"


class ChatApp:
    def __init__(
        self,
        daemon_args: list[str],
        workspace: Path,
        *,
        color: bool,
        history: Path | None,
        terminal: tuple[Input, Output] | None = None,
    ) -> None:
        """``terminal``: the keys and screen to use instead of this process's (tests: a pipe)."""
        self.workspace = workspace
        self.paint = Painter(color)
        self.transcript = Transcript(self.paint)
        self.daemon = Daemon(daemon_args, workspace, self._on_update, self._on_request)
        self.approval: Approval | None = None
        self.picker: list[JsonObject] | None = None
        self.picked = 0
        self.turn: PromptTurn | None = None
        self.queue: list[str] = []  # held here: before the session is open, or behind a resumed turn
        self.outbox = Outbox(self)
        self.waiting_resumed_turn = False
        self.shown: set[int] = set()  # held messages already on the screen (by identity)
        self.ready = False
        self.note = "starting the daemon…"
        self.exit_code = 0
        self._last_interrupt = 0.0
        self._flushing = False
        self._writing = asyncio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()
        self.buffer = Buffer(
            multiline=True,
            history=_history(history),
            complete_while_typing=True,
            completer=ChatCompleter(workspace, lambda: self.transcript.commands),
        )
        self.app_started = False
        self.app: Application[int] = Application(
            layout=build_layout(self),
            key_bindings=all_keys(self),
            full_screen=False,
            erase_when_done=True,
            style=Style.from_dict({"status": "reverse", "prompt": "bold"}),
            color_depth=ColorDepth.DEPTH_8_BIT if color else ColorDepth.DEPTH_1_BIT,
            input=terminal[0] if terminal else None,
            output=terminal[1] if terminal else _output(),
        )

    # the run

    async def run(self, start: sessions.Start) -> int:
        """The chat until the user leaves; ``start`` (a coroutine function) picks the session."""
        # a first line of our own: the app never starts on the screen's top row, where its
        # first erase would be a whole-screen clear (tmux pushes that into the scrollback)
        sys.stdout.write(self.paint.style(f"tether chat · {self.workspace} · Ctrl-D quits", "2") + "\n")
        sys.stdout.flush()
        self.app_started = True
        self.spawn(self._start(start))
        await self.app.run_async()
        await self._finish()
        return self.exit_code

    async def _start(self, start: sessions.Start) -> None:
        try:
            await self.daemon.start()
            await start(self)
        except (DaemonGone, DaemonError, ConnectionError, OSError) as exc:
            message = exc.message if isinstance(exc, DaemonError) else str(exc)
            if not isinstance(exc, (DaemonGone, DaemonError)):
                message = self.daemon.why_gone(exc)
            self.transcript.notice(f"tether chat: {message}")
            self.exit_code = 1
            await self.flush()
            self.app.exit()
            return
        self.transcript.flush()
        self.ready = True
        self.note = ""
        self.refresh()
        self.next_held()
        self.spawn(self._watch())
        await asyncio.to_thread(self.paint.warm)  # rich, imported while the user types

    async def _watch(self) -> None:
        """The daemon ending under the chat (killed, crashed) ends the chat, saying how to go on."""
        code = await self.daemon.ended()
        self.gone(f"exit code {code}")

    def gone(self, why: str) -> None:
        if not self.app.is_running or self.exit_code:
            return
        self.exit_code = 1
        self.transcript.cards.clear()
        self.transcript.notice(f"[the daemon stopped ({why}); `tether chat --continue` picks this session up again]")
        self.spawn(self._leave())

    async def _leave(self) -> None:
        await self.flush()
        self.quit()

    async def _finish(self) -> None:
        if self.approval is not None:
            self.approval.cancel()
        if self.turn is not None:
            self.turn.cancel()
        for task in list(self._tasks):
            task.cancel()
        text = self.transcript.take()
        if text:
            sys.stdout.write(text)
            sys.stdout.flush()
        with contextlib.suppress(TimeoutError, ConnectionError, OSError):
            await asyncio.wait_for(self.daemon.close(), 10)

    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # output

    def refresh(self) -> None:
        """Redraw soon; finished text goes to the scrollback (at most every 30 ms)."""
        if self.app_started:
            self.app.invalidate()
        if not self._flushing and self.app.is_running:
            self._flushing = True
            asyncio.get_running_loop().call_later(0.03, lambda: self.spawn(self.flush()))

    async def flush(self) -> None:
        """Finished text to the scrollback; when it returns, what was finished is written
        (one flush at a time: a second waits for the one writing)."""
        self._flushing = False
        async with self._writing:
            text = self.transcript.take()
            if not text:
                return

            def write() -> None:
                sys.stdout.write(text)
                sys.stdout.flush()

            if self.app.is_running:
                await run_in_terminal(write)
            else:
                write()

    def live_text(self) -> str:
        parts = [self.transcript.live()]
        if self.picker is not None:
            parts.append(sessions.picker_text(self))
        if self.approval is not None:
            parts.append(self.approval.panel())
        parts += [self.paint.style(line, "2") for line in self.outbox.queue_lines()]
        parts += [self.paint.style(f"queued: {text.splitlines()[0][:70]}", "2") for text in self.queue]
        return "\n".join(p for p in parts if p)

    def status_text(self) -> str:
        mode = self.daemon.mode or "…"
        state = self.note or ("approve? y/a/n/N" if self.approval else _WORKING if self.turn else "ready")
        context = f"context {self.transcript.used[0]}/{self.transcript.used[1]}" if self.transcript.used else ""
        width = self.app.output.get_size().columns if self.app.is_running else 80
        return fit_status(mode, state, context, self.transcript.title or "", width)

    # from the daemon

    def _on_update(self, update: JsonObject) -> None:
        if self.app.is_running:  # Markdown is laid out for the terminal's width as it is now
            self.paint.width = max(20, self.app.output.get_size().columns)
        self.transcript.update(update)
        kind = update.get("sessionUpdate")
        queue = ((update.get("_meta") or {}).get("tether") or {}).get("queue")
        if kind == "session_info_update" and isinstance(queue, list):
            self.outbox.on_queue(queue)
        if kind == "current_mode_update":
            self.daemon.mode = self.transcript.mode
        elif kind == "available_commands_update" and self.buffer.text.startswith("/"):
            self.buffer.start_completion(select_first=False)  # typed before the list came
        if self.transcript.turn_ended is not None:  # a turn the daemon resumed on load ended
            ended, self.transcript.turn_ended = self.transcript.turn_ended, None
            self.spawn(self._resumed_turn_ended(ended))
        self.refresh()

    async def _resumed_turn_ended(self, ended: JsonObject) -> None:
        try:
            report = await self.daemon.report(ended.get("turnId"))
        except DaemonError:
            report = None
        self.transcript.end_line(f"{ended.get('stopReason', 'end_turn')} (resumed turn)", report)
        self.waiting_resumed_turn = False
        self.refresh()
        self.next_held()

    async def _on_request(self, method: str, params: Any) -> Any:
        if method != "session/request_permission" or not isinstance(params, dict):
            from tether_client import ClientError

            raise ClientError(method, {"code": -32601, "message": f"tether chat does not handle {method}"})
        approval = Approval(params)
        self.transcript.flush()
        self.transcript.emit(approval.shown(self.paint, self.workspace))
        await self.flush()  # the diff is on the screen before the question
        self.approval = approval
        self.refresh()
        try:
            return await approval.future
        finally:
            self.approval = None
            self.transcript.emit(approval.summary())
            self.refresh()

    # the user's actions

    def submit(self, *, steer: bool = False) -> None:
        text = self.buffer.text
        if not text.strip():
            return
        if text.endswith("\\"):  # a trailing backslash continues the message on a new line
            self.buffer.text = text[:-1] + "\n"
            self.buffer.cursor_position = len(self.buffer.text)
            return
        self.buffer.append_to_history()
        self.buffer.reset()
        self.note = ""
        if not steer and sessions.chat_command(self, text.strip()):
            return
        self.send(text, steer=steer)

    def send(self, text: str, *, steer: bool = False) -> None:
        """To the daemon (queued there while a turn runs; ``steer``: into the running turn),
        or held here before the session is open and behind a resumed turn."""
        if not self.ready or self.waiting_resumed_turn or self.queue:
            self.queue.append(text)
        elif steer and self.turn is not None:
            self.outbox.steer(text)
        else:
            self.outbox.send(text)
        self.refresh()

    def next_held(self) -> None:
        """Send the next held message, when nothing runs."""
        if self.ready and not self.outbox.sent and not self.waiting_resumed_turn and self.queue:
            text = self.queue.pop(0)
            self.outbox.send(text, shown=id(text) in self.shown)
            self.shown.discard(id(text))

    def interrupt(self) -> None:
        now = time.monotonic()
        if now - self._last_interrupt < _QUIT_WINDOW_S:
            self.quit()
            return
        self._last_interrupt = now
        if self.turn is not None:
            # session/cancel with the queued prompts; then the open question is answered "cancelled"
            self.outbox.withdraw_all()
            self.spawn(self.daemon.cancel())
            if self.approval is not None:
                self.approval.cancel()
            self.queue.clear()
            self.note = "cancelling… (Ctrl-C again quits)"
        elif self.buffer.text:
            self.buffer.reset()
            self._last_interrupt = 0.0
        else:
            self.note = "Ctrl-C again (or Ctrl-D) quits"
        self.refresh()

    def quit(self) -> None:
        if self.app.is_running:
            self.app.exit(result=0)

    def cycle_mode(self) -> None:
        modes = self.daemon.modes
        if not modes or self.daemon.session is None:
            return
        current = self.daemon.mode
        mode = modes[(modes.index(current) + 1) % len(modes)] if current in modes else modes[0]
        self.daemon.mode = mode  # shown at once; the daemon applies it from the next tool call
        self.spawn(self._set_mode(mode))
        self.refresh()

    async def _set_mode(self, mode: str) -> None:
        try:
            await self.daemon.set_mode(mode)
        except DaemonError as exc:
            self.transcript.notice(f"[mode {mode}: {exc.message}]")
            self.refresh()

    def show_thought(self) -> None:
        if self.transcript.last_thought:
            self.transcript.emit(self.paint.style(self.transcript.last_thought.strip(), "2;3"))
            self.refresh()

    def answer(self, key: str) -> None:
        if self.approval is not None and self.approval.answer(key):
            self.refresh()

    def toggle_hunk(self, number: int) -> None:
        if self.approval is not None:
            self.approval.toggle(number)
            self.refresh()


def _output() -> Output:
    """The terminal, without cursor position requests: with them prompt_toolkit takes every
    row below the prompt once the answer comes, scrolling its first frame into the
    scrollback; the chat draws only the rows it needs (the completion menu's are reserved)."""
    output = create_output()
    if isinstance(output, Vt100_Output):
        output.enable_cpr = False
    return output


def _history(path: Path | None) -> History:
    if path is None:
        return InMemoryHistory()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))  # what was typed: the user's only
        return FileHistory(str(path))
    except OSError:
        return InMemoryHistory()
