"""The chat split in real Neovim against the real daemon: streamed answers, thinking,
tool call blocks, plans, the end of each turn, locations that open files, the status
component."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from nvim_driver import BOTH_ACP_VERSIONS, Nvim, assert_screen, open_chat, serve_command

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = BOTH_ACP_VERSIONS


def folded(nvim: Nvim) -> list[int]:
    """Line numbers (1-based) hidden in closed folds of the chat window."""
    return nvim.lua(
        """
        local win = require("tether").client().chat:windows()
        return vim.api.nvim_win_call(win, function()
          local out = {}
          for l = 1, vim.api.nvim_buf_line_count(0) do
            if vim.fn.foldclosed(l) ~= -1 then table.insert(out, l) end
          end
          return out
        end)
        """
    )


def test_toggle_opens_the_chat_split_with_a_prompt_area_and_closes_it(nvim: Nvim) -> None:
    open_chat(nvim)
    names = nvim.lua(
        "return vim.tbl_map(function(w) return vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)) end, vim.api.nvim_tabpage_list_wins(0))"
    )
    assert any(name.endswith("tether://chat/ws") for name in names)
    assert any(name.endswith("tether://prompt/ws") for name in names)
    assert nvim.lua("return vim.bo[require('tether').client().chat.buf].filetype") == "markdown"
    assert nvim.lua("return vim.bo[require('tether').client().chat.buf].buftype") == "nofile"
    # the prompt area is where the cursor goes
    assert nvim.lua("return vim.api.nvim_buf_get_name(0)").endswith("tether://prompt/ws")
    nvim.cmd("Tether")
    assert nvim.lua("return #vim.api.nvim_tabpage_list_wins(0)") == 1
    nvim.cmd("Tether")
    assert nvim.lua("return #vim.api.nvim_tabpage_list_wins(0)") == 3


def test_streamed_answer_lands_in_the_chat_with_thinking_folded(nvim: Nvim, workspace: Path) -> None:
    open_chat(nvim)
    # record every change to the chat buffer while the answer streams
    nvim.lua(
        """
        _G.changes = {}
        vim.api.nvim_buf_attach(require("tether").client().chat.buf, false, {
          on_lines = function(_, _, _, first, last_old, last_new)
            table.insert(_G.changes, { first, last_old, last_new })
          end,
        })
        """
    )
    nvim.send("hello there")
    text = nvim.turn_done()
    assert_screen("streamed-answer", text, workspace)
    lines = nvim.chat_lines()
    thought = lines.index("> The user greets me.") + 1
    assert folded(nvim) == [thought, thought + 1]
    # the answer was only ever appended: no change rewrote lines above the end
    changes = nvim.lua("return _G.changes")
    line_count_before = 0
    for first, last_old, last_new in changes:
        assert first >= line_count_before - 1, (first, line_count_before, changes)
        line_count_before += last_new - last_old
    # the prompt area was emptied for the next message
    assert nvim.lua("return vim.api.nvim_buf_get_lines(require('tether').client().chat.prompt_buf, 0, -1, false)") == [
        ""
    ]


def test_the_plugin_speaks_v2_with_a_v2_daemon_and_v1_with_a_v1_only_one(nvim: Nvim, acp_version: int) -> None:
    open_chat(nvim)
    nvim.send("hello")
    text = nvim.turn_done()
    # the turn ended and its report came (v2: its id from the prompt's `messageId`)
    assert "── end_turn · 1 step · tokens 100 in / 10 out" in text
    answer = nvim.lua("return require('tether').client().info")
    assert answer["protocolVersion"] == acp_version
    if acp_version == 2:
        assert "info" in answer and "agentInfo" not in answer
        # the turn's end came as `state_update` idle, handled by the v2 adapter
        assert nvim.lua("local c = require('tether').client(); return {c.v2, c.turn_state}") == [True, "idle"]
    else:
        assert answer["_meta"]["tether"]["protocolVersions"] == [1]  # a v1-only daemon: no v2 offered
        assert nvim.lua("local c = require('tether').client(); return {c.v2, c.turn_state == nil}") == [False, True]


def test_typing_in_the_prompt_area_and_ctrl_s_sends(nvim: Nvim, workspace: Path) -> None:
    nvim.setup(start_insert=True)
    nvim.cmd("Tether")
    nvim.wait_for(lambda: nvim.lua("return require('tether').client().session ~= nil"), "a session")
    assert nvim.api.api.get_mode()["mode"] == "i"
    nvim.input("hello from the keyboard<C-s>")
    nvim.turn_done()
    assert "hello from the keyboard" in nvim.chat_lines()
    assert "Hello! I am the scripted model." in nvim.chat_lines()


def test_tool_call_block_with_location_output_folded_and_report(nvim: Nvim, workspace: Path) -> None:
    open_chat(nvim)
    nvim.send("read the readme")
    text = nvim.turn_done()
    assert_screen("tool-call", text, workspace)
    lines = nvim.chat_lines()
    title = lines.index("▸ Read README.md  [done]") + 1
    # output (fence + 3 lines + fence) folded once done; the title and location stay visible
    output = list(range(title + 2, title + 7))
    assert set(output) <= set(folded(nvim))
    assert title not in folded(nvim) and title + 1 not in folded(nvim)


def test_gf_and_enter_on_a_location_open_the_file_at_its_line(nvim: Nvim, workspace: Path) -> None:
    open_chat(nvim)
    nvim.send("find main")
    nvim.turn_done()
    lnum = nvim.chat_lines().index("  src/app.py:2") + 1
    for key in ("gf", "<CR>"):
        nvim.lua(
            """
            local win = require("tether").client().chat:windows()
            vim.api.nvim_set_current_win(win)
            vim.api.nvim_win_set_cursor(win, { ..., 0 })
            """,
            lnum,
        )
        nvim.input(key)
        nvim.wait_for(
            lambda: nvim.lua("return vim.api.nvim_buf_get_name(0)").endswith("src/app.py"), f"{key} to open src/app.py"
        )
        assert nvim.lua("return vim.api.nvim_win_get_cursor(0)[1]") == 2
        assert nvim.lua("return vim.api.nvim_get_current_line()") == "    return 42"
        # it opened outside the chat split, which stays as it was
        assert nvim.lua("return require('tether').client().chat:is_open()")


def test_plan_is_shown(nvim: Nvim, workspace: Path) -> None:
    open_chat(nvim)
    nvim.send("make a plan")
    text = nvim.turn_done()
    assert "Plan:\n- [x] Read the code\n- [~] Fix the bug (high)\n- [ ] Run the tests" in text


def test_statusline_component_follows_the_turn(nvim: Nvim) -> None:
    nvim.setup()
    assert nvim.lua("return require('tether').status()") == ""
    nvim.cmd("Tether")
    nvim.wait_for(lambda: nvim.lua("return require('tether').client().session ~= nil"), "a session")
    assert nvim.lua("return require('tether').status()") == "tether: idle"
    nvim.send("slow please")
    nvim.wait_chat("This an")
    assert nvim.lua("return require('tether').status()") == "tether: streaming"
    assert "streaming" in nvim.lua("return vim.wo[require('tether').client().chat:windows()].winbar")
    nvim.cmd("TetherCancel")
    nvim.turn_done()
    assert nvim.lua("return require('tether').status()") == "tether: idle"


def test_tether_with_text_sends_it(nvim: Nvim) -> None:
    nvim.setup()
    nvim.cmd("Tether hello from the command line")
    text = nvim.turn_done()
    assert text.startswith("## You\n\nhello from the command line\n\n## Tether\n")
    assert nvim.lua("return require('tether').client().chat:is_open()")


def test_a_prompt_the_daemon_refuses_ends_with_its_error(nvim: Nvim) -> None:
    open_chat(nvim, cmd=serve_command()[:4])  # a daemon without a model provider
    nvim.send("hello")
    text = nvim.turn_done()
    assert "── error: no model provider is configured" in text
    nvim.send("hello?")  # the chat stays usable
    nvim.turn_done(count=2)


def test_wiping_the_chat_buffer_gives_a_fresh_chat_for_the_same_session(nvim: Nvim) -> None:
    open_chat(nvim)
    session = nvim.lua("return require('tether').client().session.id")
    nvim.lua("vim.api.nvim_buf_delete(require('tether').client().chat.buf, { force = true })")
    nvim.cmd("Tether")
    nvim.send("hello")
    text = nvim.turn_done()
    assert text.startswith("## You\n\nhello\n")
    assert nvim.lua("return require('tether').client().session.id") == session


def test_the_prompt_area_completes_the_daemons_slash_commands(nvim: Nvim) -> None:
    open_chat(nvim)
    names = nvim.wait_for(
        lambda: nvim.lua(
            "local s = require('tether').client().session; return s.commands and vim.tbl_map(function(c) return c.name end, s.commands)"
        ),
        "the slash command list",
    )
    assert {"review", "init", "compact", "mode"} <= set(names)
    items = nvim.lua(
        """
        local chat = require("tether").client().chat
        local _, prompt_win = chat:windows()
        vim.api.nvim_set_current_win(prompt_win)
        vim.api.nvim_buf_set_lines(chat.prompt_buf, 0, -1, false, { "/re" })
        vim.api.nvim_win_set_cursor(prompt_win, { 1, 3 })
        assert(vim.bo.omnifunc ~= "")
        local start = require("tether.chat").omnifunc(1, "")
        return { start, require("tether.chat").omnifunc(0, "/re") }
        """
    )
    assert items[0] == 0
    assert [i["word"] for i in items[1]] == ["/review"]


def test_a_sub_agents_calls_show_under_its_delegate_call(nvim: Nvim, tmp_path: Path) -> None:
    # v1 nests the child's calls under the call; v2 sends them on the child's own session (§12.6)
    child = {"purpose": "delegate"}
    replies = [
        {
            "when": {"step": 1},
            "tool_calls": [
                {"id": "d1", "name": "delegate", "arguments": {"task": "Read README.md and say whom it greets."}}
            ],
        },
        {
            "when": {**child, "step": 1},
            "tool_calls": [{"id": "c_read", "name": "read_file", "arguments": {"path": "README.md"}}],
        },
        {"when": {**child, "step": 2}, "text": "It greets the sample workspace."},
        {"when": {"step": 2}, "usage": {"input_tokens": 100, "output_tokens": 10}, "text": "The sub-agent read it."},
    ]
    script = tmp_path / "delegate.json"
    script.write_text(json.dumps({"replies": replies}))
    open_chat(nvim, cmd=serve_command(script))
    nvim.send("find out whom the README greets")
    lines = nvim.turn_done().splitlines()
    delegate = lines.index("▸ Delegate: Read README.md and say whom it greets.  [done]")
    read = lines.index("▸ Read README.md  [done]")
    assert delegate < read < lines.index("The sub-agent read it.")
    assert (
        lines[read + 1 : read + 3] == ["  README.md:1", "```"] and "Hello from the sample workspace." in lines[read + 5]
    )
    assert "It greets the sample workspace." in lines[delegate:read]  # what it answered, in the call
    # the sub-agent's own turn did not end the chat's (one footer, after the answer)
    assert sum(line.startswith("── ") for line in lines) == 1
