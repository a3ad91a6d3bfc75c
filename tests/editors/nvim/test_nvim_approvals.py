"""Approvals in real Neovim against the real daemon: edits reviewed in a diff tab and
applied to the buffer through workspace/applyEdit, commands asked with vim.ui.select,
questions withdrawn when the turn is cancelled."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nvim_driver import BOTH_ACP_VERSIONS, Nvim, assert_screen, open_chat

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = BOTH_ACP_VERSIONS

ORIGINAL = ["# Sample", "", "Hello from the sample workspace."]


def review_tab(nvim: Nvim) -> dict:
    """Wait for the review tab; what its two windows show."""
    nvim.wait_for(lambda: nvim.lua("return vim.fn.tabpagenr('$')") == 2, "the review tab")
    return nvim.lua(
        """
        local out = {}
        for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
          local buf = vim.api.nvim_win_get_buf(win)
          table.insert(out, {
            name = vim.api.nvim_buf_get_name(buf),
            lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false),
            diff = vim.wo[win].diff,
            winbar = vim.wo[win].winbar,
          })
        end
        return out
        """
    )


def readme_buffer(nvim: Nvim) -> list[str]:
    return nvim.lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr('README.md'), 0, -1, false)")


def test_edit_opens_a_diff_and_accept_applies_it_to_the_buffer_as_one_undo_step(nvim: Nvim, workspace: Path) -> None:
    nvim.cmd("edit README.md")
    open_chat(nvim)
    nvim.send("edit the readme")
    current, proposed = review_tab(nvim)
    assert "current/README.md" in current["name"] and "proposed/README.md" in proposed["name"]
    assert current["lines"] == ORIGINAL
    assert proposed["lines"] == ["# Sample", "", "Hello, edited by Tether."]
    assert current["diff"] and proposed["diff"]
    assert "Edit README.md" in current["winbar"] and "mode ask asks before editing README.md" in current["winbar"]
    assert "a accept" in proposed["winbar"] and "r reject" in proposed["winbar"]
    # what "always" would store, before it is pressed
    assert "always: Always allow edits to `README.md` in this workspace, until you remove it" in proposed["winbar"]
    assert nvim.lua("return require('tether').status()") == "tether: waiting for approval"
    assert "▸ Edit README.md  [pending]" in nvim.chat_lines()
    assert readme_buffer(nvim) == ORIGINAL

    nvim.input("a")
    text = nvim.turn_done(count=1)
    assert nvim.lua("return vim.fn.tabpagenr('$')") == 1
    assert_screen("edit-accepted", text, workspace)
    # in the buffer, written to disk (it had no unsaved changes), one undo step
    assert readme_buffer(nvim) == ["# Sample", "", "Hello, edited by Tether."]
    assert (workspace / "README.md").read_text() == "# Sample\n\nHello, edited by Tether.\n"
    assert nvim.lua("return vim.bo[vim.fn.bufnr('README.md')].modified") is False
    nvim.lua("vim.api.nvim_buf_call(vim.fn.bufnr('README.md'), function() vim.cmd('undo') end)")
    assert readme_buffer(nvim) == ORIGINAL


def test_reject_leaves_the_buffer_unchanged_and_the_model_is_told(nvim: Nvim, workspace: Path) -> None:
    nvim.cmd("edit README.md")
    open_chat(nvim)
    nvim.send("edit the readme")
    review_tab(nvim)
    nvim.input("r")
    text = nvim.turn_done()
    assert nvim.lua("return vim.fn.tabpagenr('$')") == 1
    assert_screen("edit-rejected", text, workspace)
    assert "▸ Edit README.md  [failed]" in text
    assert "the user rejected editing README.md; do not retry it unless the user asks for it" in text
    assert readme_buffer(nvim) == ORIGINAL
    assert (workspace / "README.md").read_text() == "# Sample\n\nHello from the sample workspace.\n"
    assert nvim.lua("return vim.bo[vim.fn.bufnr('README.md')].modified") is False


def test_an_edit_to_a_buffer_with_unsaved_changes_stays_unsaved(nvim: Nvim, workspace: Path) -> None:
    nvim.cmd("edit README.md")
    nvim.lua("vim.api.nvim_buf_set_lines(0, 0, 1, false, { '# Sample, unsaved' })")
    open_chat(nvim)
    nvim.send("edit the readme")
    current, _proposed = review_tab(nvim)
    assert current["lines"][0] == "# Sample, unsaved"  # the buffer's text, not the disk's
    nvim.input("a")
    nvim.turn_done()
    assert readme_buffer(nvim) == ["# Sample, unsaved", "", "Hello, edited by Tether."]
    assert nvim.lua("return vim.bo[vim.fn.bufnr('README.md')].modified") is True
    assert (workspace / "README.md").read_text() == "# Sample\n\nHello from the sample workspace.\n"


def test_a_new_file_is_created_and_written(nvim: Nvim, workspace: Path) -> None:
    open_chat(nvim)
    nvim.send("write a note")
    current, proposed = review_tab(nvim)
    assert current["lines"] == [""] and proposed["lines"] == ["remember"]
    nvim.input("a")
    text = nvim.turn_done()
    assert "▸ Write notes/todo.txt  [done]" in text
    assert (workspace / "notes" / "todo.txt").read_text() == "remember\n"
    assert nvim.lua("return vim.fn.buflisted(vim.fn.bufnr('notes/todo.txt'))") == 1


def test_command_approval_through_vim_ui_select(nvim: Nvim, workspace: Path) -> None:
    open_chat(nvim)
    nvim.stub_select("later")
    nvim.send("run the tests")
    nvim.wait_for(nvim.selects, "the command question")
    (question,) = nvim.selects()
    # commands run in the OS sandbox here, so the network is offered as a separate choice
    assert question["items"][:2] == ["Allow once", "Allow once, with network"] and question["items"][3] == "Reject"
    assert question["items"][2].startswith("Always allow `echo` (any arguments) in this workspace")
    assert "$ echo testing && echo all passed" in question["prompt"] and "(in .)" in question["prompt"]
    assert question["kind"] == "tether.permission"
    # the block waits, pending, while the question is open
    assert "▸ echo testing && echo all passed  [pending]" in nvim.chat_lines()
    assert nvim.state() == "approval"
    nvim.answer_select(1)
    text = nvim.turn_done()
    assert_screen("command-allowed", text, workspace)
    assert "testing\nall passed\nexit code 0" in text


def test_rejecting_a_command_by_dismissing_the_question(nvim: Nvim, workspace: Path) -> None:
    open_chat(nvim)
    nvim.stub_select(None)
    nvim.send("run the tests")
    text = nvim.turn_done()
    assert "▸ echo testing && echo all passed  [failed]" in text
    assert "the user rejected running `echo testing && echo all passed`" in text


def test_cancel_withdraws_an_open_review_tab(nvim: Nvim, workspace: Path) -> None:
    nvim.cmd("edit README.md")
    open_chat(nvim)
    nvim.send("edit the readme")
    review_tab(nvim)
    nvim.cmd("TetherCancel")
    text = nvim.turn_done()
    nvim.wait_for(lambda: nvim.lua("return vim.fn.tabpagenr('$')") == 1, "the review tab to close")
    assert "── cancelled" in text
    assert "not run: the turn was cancelled before this tool finished" in text
    assert readme_buffer(nvim) == ORIGINAL
    assert (
        nvim.lua(
            "return #vim.tbl_filter(function(b) return vim.api.nvim_buf_get_name(b):match('tether://review') ~= nil end, vim.api.nvim_list_bufs())"
        )
        == 0
    )


def test_accept_always_stores_a_rule_and_the_next_edit_is_not_asked(nvim: Nvim, workspace: Path) -> None:
    open_chat(nvim)
    nvim.send("edit the readme")
    review_tab(nvim)
    nvim.input("A")
    text = nvim.turn_done()
    assert "✓ allowed by the user, always (a rule now covers it)" in text
    nvim.send("edit again")
    text = nvim.turn_done(count=2)
    second = text.split("edit again", 1)[1]
    assert "▸ Edit README.md  [done]" in second and "✓ allowed by rule #1" in second
    assert nvim.lua("return vim.fn.tabpagenr('$')") == 1
    assert (workspace / "README.md").read_text() == "# Sample\n\nHello again.\n"


def test_allow_always_says_its_scope_and_tether_rules_lists_and_removes_the_rule(nvim: Nvim, workspace: Path) -> None:
    open_chat(nvim)
    nvim.stub_select("later")
    nvim.send("run the tests")
    nvim.wait_for(nvim.selects, "the command question")
    (question,) = nvim.selects()
    always = (
        "Always allow `echo` (any arguments) in this workspace: sandboxed, writes only inside the workspace and a private temp dir, "
        "no network; until you remove it (approval rules)"
    )
    assert question["items"] == ["Allow once", "Allow once, with network", always, "Reject"]
    nvim.answer_select(3)
    assert "testing\nall passed\nexit code 0" in nvim.turn_done()

    nvim.lua("_G.notes = {}; require('tether.seams').notify = function(m) table.insert(_G.notes, m) end")
    nvim.stub_select(1)  # the first rule listed (the stored one), then "Remove rule #1"
    nvim.cmd("TetherRules")
    nvim.wait_for(lambda: nvim.lua("return _G.notes[1]"), "the removal notice")
    listed, confirm = nvim.selects()
    assert listed["kind"] == "tether.rules"
    assert listed["items"][0] == "#1  allow  `echo` (any arguments)"
    assert "deny  `git push` (any arguments)  (built-in: not removable)" in listed["items"]
    assert confirm["items"] == ["Remove rule #1", "Keep it"]
    assert nvim.lua("return _G.notes[1]") == "Tether: rule #1 removed; what it allowed is asked again"

    nvim.stub_select(None)  # the command is asked again (and dismissed: rejected)
    nvim.send("run the tests")
    nvim.turn_done(count=2)
    assert [s["kind"] for s in nvim.selects()] == ["tether.permission"]
