"""Buffers and the daemon: the agent reads unsaved text, edits are checked against the
buffer's version, the daemon stops with Neovim."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from nvim_driver import BOTH_ACP_VERSIONS, Nvim, open_chat

pytestmark = BOTH_ACP_VERSIONS


def tool_output(text: str) -> str:
    return text.split("▸ Read README.md  [done]", 1)[1].split("```", 2)[1]


def test_the_agent_reads_unsaved_text_of_open_buffers(nvim: Nvim, workspace: Path) -> None:
    nvim.cmd("edit README.md")
    open_chat(nvim, sync_debounce_ms=60000)  # only the flush before the prompt can send it
    nvim.lua("vim.api.nvim_buf_set_lines(vim.fn.bufnr('README.md'), 2, 3, false, { 'An unsaved line.' })")
    nvim.send("read the readme")
    text = nvim.turn_done()
    assert "     3\tAn unsaved line." in tool_output(text)
    assert "sample workspace" not in tool_output(text)
    assert (workspace / "README.md").read_text() == "# Sample\n\nHello from the sample workspace.\n"


def test_changes_are_sent_after_a_pause_and_closing_the_buffer_returns_to_the_disk(nvim: Nvim, workspace: Path) -> None:
    open_chat(nvim, sync_debounce_ms=20)
    nvim.cmd("wincmd t | edit README.md")  # opened after the daemon started
    nvim.lua("vim.api.nvim_buf_set_lines(vim.fn.bufnr('README.md'), 2, 3, false, { 'Typed, not saved.' })")
    nvim.wait_for(
        lambda: nvim.lua("return not require('tether').client().docsync:doc(vim.fn.bufnr('README.md')).dirty"),
        "the change to be sent",
    )
    nvim.send("read the readme")
    assert "Typed, not saved." in tool_output(nvim.turn_done())
    nvim.cmd("bwipeout! README.md")
    nvim.send("read the readme again")
    text = nvim.turn_done(count=2)
    second = text.split("read the readme again", 1)[1]
    assert "Hello from the sample workspace." in tool_output(second)


def test_an_edit_against_text_you_changed_while_deciding_is_not_applied(nvim: Nvim, workspace: Path) -> None:
    nvim.cmd("edit README.md")
    open_chat(nvim, sync_debounce_ms=60000)
    nvim.send("edit the readme")
    nvim.wait_for(lambda: nvim.lua("return vim.fn.tabpagenr('$')") == 2, "the review tab")
    nvim.lua("vim.api.nvim_buf_set_lines(vim.fn.bufnr('README.md'), 0, 1, false, { '# Mine' })")
    nvim.input("a")
    text = nvim.turn_done()
    assert "▸ Edit README.md  [failed]" in text
    assert "'README.md' changed while the change was waiting for approval; nothing was written." in text
    assert nvim.lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr('README.md'), 0, -1, false)") == [
        "# Mine",
        "",
        "Hello from the sample workspace.",
    ]


def test_apply_edit_refuses_a_stale_version_and_applies_a_current_one(nvim: Nvim, workspace: Path) -> None:
    nvim.cmd("edit README.md")
    open_chat(nvim, sync_debounce_ms=60000)
    result = nvim.lua(
        """
        local client = require("tether").client()
        local buf = vim.fn.bufnr("README.md")
        local version = client.docsync:doc(buf).version
        local function edit(v)
          return { label = "Tether: edit README.md", edit = { documentChanges = { {
            textDocument = { uri = vim.uri_from_bufnr(buf), version = v },
            edits = { { range = { start = { line = 0, character = 0 }, ["end"] = { line = 3, character = 0 } },
                        newText = "# Sample\\n\\nChanged.\\n" } },
          } } } }
        end
        local apply = require("tether.apply_edit").apply
        vim.api.nvim_buf_set_lines(buf, 1, 2, false, { "typed" })  -- not sent yet
        local stale = apply(edit(version), client.docsync)
        local after_stale = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
        client.docsync:flush(buf)
        local current = apply(edit(client.docsync:doc(buf).version), client.docsync)
        return { stale, after_stale, current, vim.api.nvim_buf_get_lines(buf, 0, -1, false) }
        """
    )
    stale, after_stale, current, after = result
    assert stale["applied"] is False and "README.md changed in the editor since version" in stale["failureReason"]
    assert after_stale == ["# Sample", "typed", "Hello from the sample workspace."]
    assert current == {"applied": True}
    assert after == ["# Sample", "", "Changed."]


def test_the_daemon_stops_with_neovim(nvim_factory, tmp_path: Path) -> None:
    nvim = nvim_factory()
    open_chat(nvim)
    pid = nvim.lua("return vim.api.nvim_get_proc_children(vim.fn.getpid())[1]")
    assert pid
    nvim.close()
    _wait_gone(pid)


def _wait_gone(pid: int) -> None:
    deadline = time.monotonic() + 10
    try:
        while _alive(pid):
            assert time.monotonic() < deadline, "the daemon outlived Neovim"
            time.sleep(0.02)
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)  # do not leave it behind


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for our purposes
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(") ", 1)[1][0] != "Z"


def test_the_daemon_stops_with_neovim_after_requests_sent_together(nvim_factory) -> None:
    nvim = nvim_factory()
    nvim.setup()
    nvim.stub_select(None)
    nvim.lua("_G.notified = {}; require('tether.seams').notify = function(msg) table.insert(_G.notified, msg) end")
    # a new session and the session list, asked at once right after the start (the list
    # may or may not include the new session yet: the two run concurrently)
    nvim.cmd("Tether")
    nvim.cmd("TetherSessions")
    nvim.wait_for(lambda: nvim.lua("return require('tether').client().session ~= nil"), "a session")
    nvim.wait_for(lambda: nvim.selects() or nvim.lua("return _G.notified[1]"), "the session list's answer")
    pid = nvim.lua("return vim.api.nvim_get_proc_children(vim.fn.getpid())[1]")
    nvim.close()
    _wait_gone(pid)
