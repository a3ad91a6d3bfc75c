"""Turns and sessions in real Neovim against the real daemon: cancelling mid-stream,
new sessions, loading a stored session after the daemon restarts, search, modes."""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING

import pytest
from nvim_driver import BOTH_ACP_VERSIONS, Nvim, assert_screen, open_chat

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = BOTH_ACP_VERSIONS


@pytest.mark.parametrize("how", [":TetherCancel", "<C-c> in the chat"])
def test_cancel_mid_stream_shows_the_cancelled_stop_reason(nvim: Nvim, workspace: Path, how: str) -> None:
    open_chat(nvim)
    nvim.send("slow please")
    nvim.wait_chat("This an")
    if how == ":TetherCancel":
        nvim.cmd("TetherCancel")
    else:
        nvim.lua("vim.api.nvim_set_current_win((require('tether').client().chat:windows()))")
        nvim.input("<C-c>")
    text = nvim.turn_done()
    footer = [line for line in text.splitlines() if line.startswith("── ")]
    assert footer and footer[0].startswith("── cancelled · ")
    answer = text.split("## Tether\n\n", 1)[1].split("\n\n── ")[0]
    full = "This answer streams slowly, two characters at a time"
    # part of the answer arrived, not all of it
    assert full.startswith(answer[:6]) and len(answer) < 200


def test_new_session_empties_the_chat(nvim: Nvim) -> None:
    open_chat(nvim)
    nvim.send("hello")
    nvim.turn_done()
    first = nvim.lua("return require('tether').client().session.id")
    nvim.cmd("TetherNew")
    nvim.wait_for(lambda: nvim.lua("return require('tether').client().session.id") != first, "a new session")
    assert nvim.chat_lines() == [""]
    nvim.send("hello again")
    nvim.turn_done()
    assert nvim.chat_lines()[:3] == ["## You", "", "hello again"]


def test_sessions_reloads_a_session_after_the_daemon_restarts(nvim: Nvim, workspace: Path, acp_version: int) -> None:
    open_chat(nvim)
    nvim.send("read the readme")
    nvim.turn_done()
    session = nvim.lua("return require('tether').client().session.id")
    nvim.lua("require('tether').stop()")
    nvim.wait_state("stopped")
    assert "[the daemon stopped (exit code 0)]" in nvim.chat_text()

    nvim.stub_select(1)
    nvim.cmd("TetherSessions")
    nvim.wait_for(
        lambda: nvim.lua("local s = require('tether').client().session; return s and not s.loading"),
        "the session to load",
    )
    (question,) = nvim.selects()
    assert question["kind"] == "tether.session"
    assert len(question["items"]) == 1 and question["items"][0].endswith("  read the readme")
    assert nvim.lua("return require('tether').client().session.id") == session
    assert_screen("session-replay", nvim.chat_text(), workspace)
    # v2 reopens with session/resume from the start; its replay ended with `replay_complete`
    replayed = nvim.lua("return require('tether').client().session.replayed")
    assert replayed is (True if acp_version == 2 else None)
    # the replayed session goes on
    nvim.send("hello")
    text = nvim.turn_done()
    assert "Hello! I am the scripted model." in text


def test_search_opens_the_session_at_the_match(nvim: Nvim) -> None:
    open_chat(nvim)
    nvim.send("read the readme")
    nvim.turn_done()
    nvim.cmd("TetherNew")
    nvim.wait_for(lambda: nvim.chat_lines() == [""], "an empty chat")
    nvim.stub_select(1)
    nvim.cmd("TetherSearch says hello")
    nvim.wait_for(lambda: nvim.selects(), "the search results")
    (question,) = nvim.selects()
    assert question["kind"] == "tether.search"
    assert question["items"] == ["read the readme · assistant: The README says hello."]  # no raw [[match]] markers
    nvim.wait_for(lambda: "The README says hello." in nvim.chat_lines(), "the session to be replayed")
    nvim.wait_for(
        lambda: nvim.lua("return vim.api.nvim_get_current_line()") == "The README says hello.",
        "the cursor on the match",
    )


def test_mode_read_only_refuses_edits_and_full_auto_runs_commands(nvim: Nvim) -> None:
    open_chat(nvim)
    nvim.cmd("TetherMode read-only")
    nvim.wait_for(lambda: nvim.lua("return require('tether').client().session.mode") == "read-only", "mode read-only")
    assert "mode read-only" in nvim.lua("return vim.wo[require('tether').client().chat:windows()].winbar")
    nvim.send("edit the readme")
    text = nvim.turn_done()
    assert "not allowed in read-only mode: edit_file changes things" in text
    assert nvim.lua("return vim.fn.tabpagenr('$')") == 1

    nvim.stub_select(3)  # would reject, if asked
    nvim.cmd("TetherMode full-auto")
    nvim.wait_for(lambda: nvim.lua("return require('tether').client().session.mode") == "full-auto", "mode full-auto")
    nvim.send("run the tests")
    text = nvim.turn_done(count=2)
    assert nvim.selects() == []
    assert "✓ allowed by mode full-auto" in text and "all passed" in text


def test_mode_without_argument_asks_which(nvim: Nvim) -> None:
    open_chat(nvim)
    nvim.stub_select(3)
    nvim.cmd("TetherMode")
    nvim.wait_for(lambda: nvim.lua("return require('tether').client().session.mode") == "auto-edit", "mode auto-edit")
    assert nvim.selects()[0]["items"] == ["read-only", "ask", "auto-edit", "full-auto"]


def test_a_question_left_open_by_a_dead_daemon_is_asked_again_after_loading(nvim: Nvim, workspace: Path) -> None:
    nvim.cmd("edit README.md")
    open_chat(nvim)
    nvim.send("edit the readme")
    nvim.wait_for(lambda: nvim.lua("return vim.fn.tabpagenr('$')") == 2, "the review tab")
    pid = nvim.lua("return vim.api.nvim_get_proc_children(vim.fn.getpid())[1]")
    os.kill(pid, signal.SIGKILL)
    nvim.wait_state("stopped")
    # the question died with its daemon
    assert nvim.lua("return vim.fn.tabpagenr('$')") == 1
    assert "the turn it was running ended with it]" in nvim.chat_text()

    nvim.stub_select(1)
    nvim.cmd("TetherSessions")
    nvim.wait_for(lambda: nvim.lua("return vim.fn.tabpagenr('$')") == 2, "the question asked again")
    assert nvim.state() == "approval"
    nvim.input("a")
    text = nvim.turn_done()
    assert_screen("resumed-approval", text, workspace)
    assert (workspace / "README.md").read_text() == "# Sample\n\nHello, edited by Tether.\n"


def test_search_results_are_one_line_each(nvim: Nvim) -> None:
    """vim.ui.select items must be single lines: a match across lines is shown collapsed."""
    open_chat(nvim)
    nvim.send("hello")  # answered "Hello! I am the scripted model.\nAsk me about the README."
    nvim.turn_done()
    nvim.cmd("TetherNew")
    nvim.wait_for(lambda: nvim.chat_lines() == [""], "an empty chat")
    nvim.stub_select(None)
    nvim.cmd("TetherSearch scripted ask")
    nvim.wait_for(lambda: nvim.selects(), "the search results")
    (question,) = nvim.selects()
    assert question["items"] == ["hello · assistant: Hello! I am the scripted model. Ask me about the README."]
