"""The plugin's pure parts, run inside a child Neovim without a daemon: how blocks are
laid out, how the transcript streams, folds and re-renders, the doctor command."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nvim_driver import Nvim

NEW_TRANSCRIPT = """
local T = require("tether.transcript")
local seams = require("tether.seams")
_G.ticks = {}
seams.schedule = function(fn) table.insert(_G.ticks, fn) end  -- the test runs the ticks
function _G.tick() local fns = _G.ticks; _G.ticks = {}; for _, fn in ipairs(fns) do fn() end end
local buf = vim.api.nvim_create_buf(false, true)
vim.bo[buf].modifiable = false
_G.t = T.new(buf, "/ws")
_G.changes = {}
vim.api.nvim_buf_attach(buf, false, { on_lines = function(_, _, _, first, last_old, last_new)
  table.insert(_G.changes, { first, last_old, last_new })
end })
function _G.chunk(kind, text, meta)
  _G.t:update({ sessionUpdate = kind, content = { type = "text", text = text }, _meta = meta })
end
function _G.text() return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\\n") end
"""


def test_tool_block_layout(nvim: Nvim) -> None:
    lines, layout = nvim.lua(
        """
        local locations = {}
        for i = 1, 12 do locations[i] = { path = "/ws/src/f" .. i .. ".py", line = i } end
        table.insert(locations, 1, { path = "/elsewhere/x.txt" })
        return { require("tether.blocks").tool({
          title = "Search 'x'\\nin src", status = "in_progress", locations = locations,
          approvedBy = "allowed by mode full-auto",
          content = { { type = "content", content = { type = "text", text = "has ``` inside\\n" } } },
        }, "/ws") }
        """
    )
    assert lines == [
        "▸ Search 'x' in src  [running]",
        "  /elsewhere/x.txt",
        *[f"  src/f{i}.py:{i}" for i in range(1, 10)],
        "  … 3 more",
        "  ✓ allowed by mode full-auto",
        "````",
        "has ``` inside",
        "````",
    ]
    assert layout["output"] == {"first": 13, "last": 15}
    # line offsets in the block 1..10 hold the locations (a list on the Python side)
    assert layout["locations"][0] == {"path": "/elsewhere/x.txt"}
    assert layout["locations"][1] == {"path": "/ws/src/f1.py", "line": 1}
    assert len(layout["locations"]) == 10


def test_diff_content_and_statuses(nvim: Nvim) -> None:
    lines = nvim.lua(
        """
        local blocks = require("tether.blocks")
        local out = {}
        for _, s in ipairs({ "pending", "in_progress", "completed", "failed" }) do
          table.insert(out, blocks.tool({ title = "T", status = s }, "/ws")[1])
        end
        vim.list_extend(out, (blocks.tool({ title = "Edit a.txt", status = "pending", content = {
          { type = "diff", path = "/ws/a.txt", oldText = "one\\ntwo\\n", newText = "one\\n2\\n" },
          { type = "diff", path = "/ws/new.txt", newText = "fresh\\n" },
        } }, "/ws")))
        return out
        """
    )
    assert lines[:4] == ["▸ T  [pending]", "▸ T  [running]", "▸ T  [done]", "▸ T  [failed]"]
    assert lines[4:] == [
        "▸ Edit a.txt  [pending]",
        "```diff",
        "--- a/a.txt",
        "+++ b/a.txt",
        "@@ -1,2 +1,2 @@",
        " one",
        "-two",
        "+2",
        "```",
        "```diff",
        "--- /dev/null",
        "+++ b/new.txt",
        "@@ -0,0 +1 @@",
        "+fresh",
        "```",
    ]


def test_footer_plan_and_user_message(nvim: Nvim) -> None:
    out = nvim.lua(
        """
        local b = require("tether.blocks")
        return {
          b.footer({ stopReason = "end_turn", usage = { used = 257, size = 128000 },
                     report = { stepCount = 2, totalUsage = { inputTokens = 391, outputTokens = 9 } } })[1],
          b.footer({ stopReason = "cancelled" })[1],
          b.footer({ error = "the model provider failed: boom" })[1],
          b.plan({}),
          b.user("two\\nlines"),
        }
        """
    )
    assert out[0] == "── end_turn · 2 steps · tokens 391 in / 9 out · context 257/128000"
    assert out[1] == "── cancelled"
    assert out[2] == "── error: the model provider failed: boom"
    assert out[3] == ["Plan: (cleared)"]
    assert out[4] == ["## You", "", "two", "lines"]


def test_deltas_of_one_tick_are_written_together_and_only_appended(nvim: Nvim) -> None:
    nvim.lua(NEW_TRANSCRIPT)
    nvim.lua("_G.t:user('hi'); _G.changes = {}")
    nvim.lua(
        "_G.chunk('agent_message_chunk', 'Hel'); _G.chunk('agent_message_chunk', 'lo, '); _G.chunk('agent_message_chunk', 'you.')"
    )
    assert nvim.lua("return _G.text()") == "## You\n\nhi"  # nothing until the tick
    nvim.lua("_G.tick()")
    assert nvim.lua("return _G.text()") == "## You\n\nhi\n\n## Tether\n\nHello, you."
    nvim.lua("_G.changes = {}")
    nvim.lua("_G.chunk('agent_message_chunk', ' More\\nand a new line'); _G.tick()")
    nvim.lua("_G.chunk('agent_message_chunk', '!'); _G.tick()")
    assert nvim.lua("return _G.text()").endswith("Hello, you. More\nand a new line!")
    # each tick changed only the last line of the buffer (appending to it)
    assert nvim.lua("return _G.changes") == [[6, 7, 8], [7, 8, 8]]


def test_a_tool_block_rerenders_in_place_while_text_goes_on_after_it(nvim: Nvim) -> None:
    nvim.lua(NEW_TRANSCRIPT)
    nvim.lua(
        """
        _G.t:user("go")
        _G.chunk("agent_thought_chunk", "Think\\nhard")
        _G.t:update({ sessionUpdate = "tool_call", toolCallId = "c", title = "run_command", kind = "execute", status = "pending" })
        _G.chunk("agent_message_chunk", "Meanwhile.")
        _G.tick()
        _G.t:update({ sessionUpdate = "tool_call_update", toolCallId = "c", status = "completed",
          content = { { type = "content", content = { type = "text", text = "out1\\nout2" } } } })
        """
    )
    assert nvim.lua("return _G.text()") == (
        "## You\n\ngo\n\n## Tether\n\n> Think\n> hard\n\n▸ run_command  [done]\n```\nout1\nout2\n```\n\nMeanwhile."
    )
    levels = nvim.lua("local out = {} for l = 1, 16 do out[l] = _G.t:fold_level(l) end return out")
    # thinking (lines 7-8) and the finished output (11-14) fold; the rest does not
    assert levels == ["0", "0", "0", "0", "0", "0", ">1", "<1", "0", "0", ">1", "1", "1", "<1", "0", "0"]
    assert nvim.lua("return _G.t:fold_text(7, 8)") == "> ⋯ thinking (2 lines)"
    assert nvim.lua("return _G.t:fold_text(11, 14)") == "  ⋯ output (4 lines)"


def test_notices_badges_and_replayed_user_content(nvim: Nvim) -> None:
    nvim.lua(NEW_TRANSCRIPT)
    nvim.lua(
        """
        _G.t:update({ sessionUpdate = "user_message_chunk", content = { type = "text", text = "look at" } })
        _G.t:update({ sessionUpdate = "user_message_chunk", content = { type = "resource_link", uri = "file:///ws/a.py", name = "a.py" } })
        _G.chunk("agent_message_chunk", "Partial", { tether = { status = "cancelled" } })
        _G.chunk("agent_message_chunk", "\\n[the model's reply broke off: x. Retrying this step once.]\\n", { tether = { notice = true } })
        _G.tick()
        """
    )
    assert nvim.lua("return _G.text()") == (
        "## You\n\nlook at\n[a.py](file:///ws/a.py)\n\n## Tether\n\n_(cancelled)_ Partial\n\n"
        "[the model's reply broke off: x. Retrying this step once.]"
    )


def test_doctor_command_follows_the_serve_command(nvim: Nvim) -> None:
    out = nvim.lua(
        """
        local d = require("tether.health").doctor_command
        return {
          d({ "tether", "serve" }, {}),
          d({ "/usr/bin/python3", "-m", "tether", "serve", "--framing", "lsp", "--provider", "scripted", "--script", "s.json" }, {}),
          d({ "tether", "serve" }, { provider = "openai", model = "gpt", maxSteps = 3, guard = "warn" }),
        }
        """
    )
    assert out[0] == ["tether", "doctor", "--json"]
    assert out[1] == [
        "/usr/bin/python3",
        "-m",
        "tether",
        "doctor",
        "--json",
        "--provider",
        "scripted",
        "--script",
        "s.json",
    ]
    assert out[2][:3] == ["tether", "doctor", "--json"]
    flags = dict(zip(out[2][3::2], out[2][4::2], strict=True))
    assert flags == {"--provider": "openai", "--model": "gpt", "--max-steps": "3"}


def test_a_whole_text_edit_changes_only_the_lines_that_differ(nvim: Nvim, tmp_path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("a\nb\nc\nd\n")
    out = nvim.lua(
        """
        local path = ...
        vim.cmd("edit " .. path)
        local buf = vim.api.nvim_get_current_buf()
        vim.api.nvim_buf_set_mark(buf, "x", 4, 0, {})
        local result = require("tether.apply_edit").apply({ edit = { documentChanges = { {
          textDocument = { uri = vim.uri_from_fname(path), version = vim.NIL },
          edits = { { range = { start = { line = 0, character = 0 }, ["end"] = { line = 4, character = 0 } },
                      newText = "a\\nB\\nc\\nd\\ne\\n" } } } } } }, nil)
        local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
        local mark = vim.api.nvim_buf_get_mark(buf, "x")
        vim.cmd("undo")
        return { result, lines, mark, vim.api.nvim_buf_get_lines(buf, 0, -1, false) }
        """,
        str(path),
    )
    result, lines, mark, undone = out
    assert result == {"applied": True}
    assert lines == ["a", "B", "c", "d", "e"]
    assert mark == [4, 0]  # the mark on an unchanged line stayed
    assert undone == ["a", "b", "c", "d"]
    assert path.read_text() == "a\nB\nc\nd\ne\n"


def test_slash_command_completion_items(nvim: Nvim) -> None:
    items = nvim.lua(
        """
        local commands = {
          { name = "review", description = "Review the uncommitted changes" },
          { name = "mode", description = "Switch the mode", input = { hint = "mode id" } },
          { name = "init", description = "Write AGENTS.md" },
        }
        return { require("tether.chat").command_items(commands, "/"), require("tether.chat").command_items(commands, "/m") }
        """
    )
    assert [i["word"] for i in items[0]] == ["/review", "/mode", "/init"]
    assert items[1] == [{"word": "/mode", "abbr": "/mode <mode id>", "menu": "Switch the mode", "icase": 1}]


V2_ADAPTER = """
local acp_v2 = require("tether.acp_v2")
_G.v2_client = { terminals = {}, session = { id = "s" } }
function _G.v2(update)
  acp_v2.update(update, _G.v2_client, function(u) _G.t:update(u) end)
end
"""


def test_v2_command_output_streams_from_base64_chunks_into_the_call_block(nvim: Nvim) -> None:
    nvim.lua(NEW_TRANSCRIPT + V2_ADAPTER)
    text = nvim.lua(
        """
        v2({ sessionUpdate = "tool_call_update", toolCallId = "c1", title = "make test", kind = "execute", status = "pending" })
        v2({ sessionUpdate = "tool_call_update", toolCallId = "c1", status = "in_progress",
             content = { { type = "terminal", terminalId = "c1" } } })
        v2({ sessionUpdate = "terminal_output_chunk", terminalId = "c1", data = vim.base64.encode("build") })
        v2({ sessionUpdate = "terminal_output_chunk", terminalId = "c1", data = vim.base64.encode("ing\\n") })
        local before_tick = _G.text()
        _G.tick()  -- the chunks of one tick are shown together
        local after_one = _G.text()
        v2({ sessionUpdate = "terminal_output_chunk", terminalId = "c1", data = vim.base64.encode("ok ✓\\n") })
        v2({ sessionUpdate = "terminal_update", terminalId = "c1", exitStatus = { exitCode = 2 } })
        v2({ sessionUpdate = "terminal_output_chunk", terminalId = "c1", data = vim.base64.encode("late\\n") })
        _G.tick()
        local ended = _G.text()
        v2({ sessionUpdate = "tool_call_update", toolCallId = "c1", status = "completed",
             content = { { type = "content", content = { type = "text", text = "building\\nok ✓\\nexit code 2 · 0.1 s" } } } })
        _G.tick()
        return { before_tick, after_one, ended, _G.text(), #_G.changes }
        """
    )
    before_tick, after_one, ended, final, _ = text
    assert before_tick.endswith("▸ make test  [running]")
    assert after_one.endswith("▸ make test  [running]\n```\nbuilding\n```")
    # later chunks add to the first, the end says how it exited, nothing after it is shown
    assert ended.endswith("▸ make test  [running]\n```\nbuilding\nok ✓\nexit code 2\n```")
    # the call's own last content replaces the live output
    assert final.endswith("▸ make test  [done]\n```\nbuilding\nok ✓\nexit code 2 · 0.1 s\n```")


def test_v2_plan_notice_messages_and_diffs_show_as_on_v1(nvim: Nvim) -> None:
    nvim.lua(NEW_TRANSCRIPT + V2_ADAPTER)
    text = nvim.lua(
        """
        v2({ sessionUpdate = "agent_message_chunk", messageId = "turn_1.1", content = { type = "text", text = "Planning." } })
        v2({ sessionUpdate = "plan_update", plan = { type = "items", planId = "s.plan",
             entries = { { content = "Fix it", status = "in_progress", priority = "high" } } } })
        v2({ sessionUpdate = "notice", severity = "info", title = "3 earlier messages were summarised" })
        v2({ sessionUpdate = "tool_call_update", toolCallId = "e1", title = "Edit a.txt", kind = "edit", status = "completed",
             content = { { type = "diff", changes = { { operation = "modify", path = "/ws/a.txt" } },
               patch = { format = "git_patch", text = "diff --git a/ws/a.txt b/ws/a.txt\\n--- a/a.txt\\n+++ b/a.txt\\n@@ -1,2 +1,2 @@\\n one\\n-two\\n+2\\n" } } } })
        _G.tick()
        return _G.text()
        """
    )
    assert text.splitlines() == [
        "## Tether",
        "",
        "Planning.",
        "",
        "Plan:",
        "- [~] Fix it (high)",
        "",
        "3 earlier messages were summarised",
        "",
        "▸ Edit a.txt  [done]",
        "```diff",
        "--- a/a.txt",
        "+++ b/a.txt",
        "@@ -1,2 +1,2 @@",
        " one",
        "-two",
        "+2",
        "```",
    ]


def test_v2_permission_review_texts_come_from_the_buffer_and_the_patch(nvim: Nvim, tmp_path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("one\ntwo\nthree\n")
    (tmp_path / "link.txt").symlink_to(path)  # the buffer names the file the daemon names by its real path
    got = nvim.lua(
        """
        local acp_v2 = require("tether.acp_v2")
        local path, link = ...
        vim.cmd.edit(link)
        vim.api.nvim_buf_set_lines(0, 2, 3, false, { "three (unsaved)" })
        local patch = "--- a/a.txt\\n+++ b/a.txt\\n@@ -1,2 +1,2 @@\\n one\\n-two\\n+2\\n"
        local params = acp_v2.permission({ sessionId = "s", title = "Edit a.txt", description = "mode ask asks",
          subject = { type = "tool_call", toolCall = { toolCallId = "e1", kind = "edit", content = {
            { type = "diff", changes = { { operation = "modify", path = path } }, patch = { format = "git_patch", text = patch } },
            { type = "diff", changes = { { operation = "add", path = path .. ".new" } },
              patch = { format = "git_patch", text = "@@ -0,0 +1 @@\\n+fresh\\n" } },
            { type = "diff", changes = { { operation = "modify", path = path } },
              patch = { format = "git_patch", text = "@@ -1 +1 @@\\n-not there\\n+x\\n" } } } } },
          options = {} })
        return { params.toolCall, params._meta.tether.reason }
        """,
        str(path.resolve()),
        str(tmp_path / "link.txt"),
    )
    call, reason = got
    assert call["title"] == "Edit a.txt" and reason == "mode ask asks"
    modify, add, stale = call["content"]
    # the current text is the buffer's (your unsaved line too), the proposed one that with the patch
    assert modify["oldText"] == "one\ntwo\nthree (unsaved)\n" and modify["newText"] == "one\n2\nthree (unsaved)\n"
    assert "oldText" not in add and add["newText"] == "fresh\n"
    # a patch that does not fit the text any more is shown as it is
    assert stale["newText"].startswith("@@ -1 +1 @@")
