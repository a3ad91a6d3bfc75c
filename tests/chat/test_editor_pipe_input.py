"""The chat's editor, keys and layout driven through prompt_toolkit's own test driver
(`create_pipe_input`: the keys as a terminal sends them), against a real scripted daemon;
the screen is a VT100 output of 80x24 written to a string."""

from __future__ import annotations

import asyncio
import io
import re
import time
from typing import TYPE_CHECKING

import pytest
from chat_harness import SCRIPT
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from tether_chat.app import ChatApp
from tether_chat.sessions import start_with

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

ENTER, ALT_ENTER, SHIFT_TAB, UP, CTRL_D = "\r", "\x1b\r", "\x1b[Z", "\x1b[A", "\x04"


async def until(predicate: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        await asyncio.sleep(0.02)


@pytest.fixture
def drive(daemon_env: dict[str, str], chat_workspace: Path, tmp_path: Path, monkeypatch):
    for key, value in daemon_env.items():
        monkeypatch.setenv(key, value)

    async def run(script: Callable[[ChatApp, Callable[[str], None], io.StringIO], object]) -> int:
        screen = io.StringIO()
        output = Vt100_Output(screen, lambda: Size(rows=24, columns=80), term="xterm")
        with create_pipe_input() as keys:
            args = [
                "--workspace",
                str(chat_workspace),
                "--provider",
                "scripted",
                "--script",
                str(SCRIPT),
                "--home",
                daemon_env["TETHER_HOME"],
            ]
            chat = ChatApp(args, chat_workspace, color=False, history=tmp_path / "history", terminal=(keys, output))
            running = asyncio.ensure_future(chat.run(start_with(None, continue_last=False)))
            try:
                await until(lambda: chat.ready, "the daemon is up")
                await script(chat, keys.send_text, screen)  # type: ignore[misc]
                keys.send_text(CTRL_D)
                return await asyncio.wait_for(running, 30)
            finally:
                if not running.done():
                    running.cancel()

    return run


async def test_multi_line_message_then_history_brings_it_back(drive, capsys, tmp_path: Path):
    async def script(chat: ChatApp, send, screen) -> None:
        send("first line")
        send(ALT_ENTER)
        send("second line")
        await until(lambda: chat.buffer.text == "first line\nsecond line", "two lines in the editor")
        send(ENTER)
        printed: list[str] = []
        await until(lambda: printed.append(capsys.readouterr().out) or "[end_turn" in "".join(printed), "answered")
        assert "› first line\n  second line\n" in "".join(printed)  # one message of two lines
        assert "Hello from the scripted chat." in "".join(printed)
        send(UP)
        await until(lambda: chat.buffer.text == "first line\nsecond line", "the message back from history")
        send("\x15")  # Ctrl-U: the line editor's keys
        await until(lambda: chat.buffer.text == "first line\n", "the line cut")
        send("\x03")  # Ctrl-C with no turn running: clears the editor (and quits nothing)
        await until(lambda: chat.buffer.text == "", "the editor cleared")
        assert chat.app.is_running

    assert await drive(script) == 0
    history = tmp_path / "history"
    assert "+first line\n+second line" in history.read_text()  # kept for the next chat
    assert history.stat().st_mode & 0o777 == 0o600  # what the user typed is theirs only


async def test_shift_tab_cycles_modes_in_the_daemons_order(drive):
    async def script(chat: ChatApp, send, screen) -> None:
        assert chat.daemon.modes == ["read-only", "ask", "auto-edit", "full-auto"]
        assert chat.daemon.mode == "ask"
        for expected in ("auto-edit", "full-auto", "read-only", "ask"):
            send(SHIFT_TAB)
            await until(lambda expected=expected: chat.daemon.mode == expected, f"mode {expected}")
            assert f" {expected} (Shift+Tab)" in chat.status_text()

    assert await drive(script) == 0


async def test_an_approval_fits_80_columns_and_the_keys_answer_it(drive, chat_workspace: Path):
    async def script(chat: ChatApp, send, screen) -> None:
        send("two hunks" + ENTER)
        await until(lambda: chat.approval is not None, "the approval")
        await until(lambda: "y once" in screen.getvalue(), "the panel drawn")
        send("2")
        await until(lambda: chat.approval is not None and chat.approval.kept == [True, False], "hunk 2 dropped")
        drawn = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "\n", screen.getvalue())
        assert max(len(line) for line in drawn.splitlines()) <= 80
        send("y")
        await until(lambda: chat.turn is None and chat.ready, "the turn ended")

    assert await drive(script) == 0
    lines = (chat_workspace / "long.txt").read_text().splitlines()
    assert lines[1] == "line TWO" and lines[29] == "line 30"
