"""Control while the agent works and a way back, in real Neovim against the real daemon
(SPEC §3.37, §3.40): a prompt sent during a turn is shown queued and can be withdrawn, a
steered message is shown where it landed, "Rewind to here" asks with the files it will
restore (a file changed since is listed, with the choice to overwrite it), the chat shows
the conversation as it now stands, and `:TetherChanges` shows a turn's diffs."""

from __future__ import annotations

from pathlib import Path

from nvim_driver import BOTH_ACP_VERSIONS, Nvim, open_chat

pytestmark = BOTH_ACP_VERSIONS

QUEUE = "return require('tether').client().chat.transcript:queue_lines()"


def queue_marks(nvim: Nvim) -> list[str]:
    """The virtual lines under the conversation (what the user sees of the queue)."""
    return nvim.lua(
        """
        local chat = require("tether").client().chat
        local ns = vim.api.nvim_get_namespaces()["tether.queue"]
        local out = {}
        for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(chat.buf, ns, 0, -1, { details = true })) do
          for _, line in ipairs(mark[4].virt_lines or {}) do table.insert(out, line[1][1]) end
        end
        return out
        """
    )


def cursor_on(nvim: Nvim, text: str) -> None:
    """Put the cursor in the chat window on the first line that is `text`."""
    nvim.lua(
        """
        local chat = require("tether").client().chat
        local win = chat:windows()
        vim.api.nvim_set_current_win(win)
        local lines = vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false)
        for i, line in ipairs(lines) do
          if line == ... then vim.api.nvim_win_set_cursor(win, { i, 0 }) return end
        end
        error("not in the chat: " .. ...)
        """,
        text,
    )


def test_a_prompt_during_a_turn_is_queued_withdrawn_and_the_rest_runs_after_it(nvim: Nvim) -> None:
    nvim.stub_select("later")
    open_chat(nvim)
    nvim.send("run the tests")  # asks before running the command: the turn runs until we answer
    nvim.wait_for(nvim.selects, "the command question")
    nvim.lua("_G.approve = _G.answer_select")
    nvim.send("hello one")
    nvim.send("hello two")
    nvim.wait_for(lambda: len(nvim.lua(QUEUE)) == 3, "two queued prompts")
    assert nvim.lua(QUEUE) == [
        "⏳ queued 1: hello one",
        "⏳ queued 2: hello two",
        "   (:TetherDequeue to withdraw one)",
    ]
    assert queue_marks(nvim) == nvim.lua(QUEUE)
    assert "hello one" not in nvim.chat_lines()  # shown as your message when its turn starts
    assert nvim.lua("return vim.api.nvim_buf_get_lines(require('tether').client().chat.prompt_buf, 0, -1, false)") == [
        ""
    ]

    nvim.cmd("TetherDequeue 2")
    nvim.wait_chat("[withdrawn: hello two]")
    nvim.wait_for(
        lambda: nvim.lua(QUEUE) == ["⏳ queued 1: hello one", "   (:TetherDequeue to withdraw one)"], "one left"
    )

    nvim.lua("_G.approve(1)")
    text = nvim.turn_done(count=2)
    lines = text.splitlines()
    first_footer = next(i for i, line in enumerate(lines) if line.startswith("── end_turn"))
    assert lines.index("▸ echo testing && echo all passed  [done]") < first_footer
    # the queued prompt ran next, as a turn of its own, answered after it
    assert first_footer < lines.index("hello one") < lines.index("Hello! I am the scripted model.")
    assert "hello two" not in lines
    assert nvim.lua(QUEUE) == [] and queue_marks(nvim) == []


def test_a_steered_message_lands_in_the_running_turn(nvim: Nvim) -> None:
    nvim.stub_select("later")
    open_chat(nvim)
    nvim.send("run the tests")
    nvim.wait_for(nvim.selects, "the command question")
    nvim.cmd("TetherSteer and say so when done")
    nvim.answer_select(1)  # allow the command: the steered message lands after its result
    text = nvim.turn_done()
    lines = text.splitlines()
    steered = lines.index("## You (steered in after step 1)")
    assert lines[steered + 2] == "and say so when done"
    footer = next(i for i, line in enumerate(lines) if line.startswith("── end_turn"))
    assert lines.index("▸ echo testing && echo all passed  [done]") < steered < footer
    # one turn: the steered message was not run as a turn of its own
    assert sum(line.startswith("── ") for line in lines) == 1


def test_rewind_to_here_lists_the_files_asks_to_overwrite_a_changed_one_and_reloads_the_chat(
    nvim: Nvim, workspace: Path
) -> None:
    open_chat(nvim)
    # the user's choice in the editor (session/set_mode); a plugin's `mode` option may only
    # make the daemon stricter than the user's config (SPEC §9)
    nvim.cmd("TetherMode full-auto")
    nvim.wait_for(lambda: nvim.lua("return require('tether').client().session.mode") == "full-auto", "mode full-auto")
    nvim.send("write a note")
    nvim.turn_done(count=1)
    nvim.send("edit the readme")
    nvim.turn_done(count=2)

    # what each turn changed, with diffs
    nvim.cmd("TetherChanges 2")
    nvim.wait_for(lambda: nvim.lua("return vim.fn.bufnr('tether://changes/turn-2')") != -1, "turn 2's changes")
    changes = nvim.lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr('tether://changes/turn-2'), 0, -1, false)")
    assert changes[0] == "# Files changed by turn 2"
    assert "modified README.md  (turn 2)" in changes
    assert "-Hello from the sample workspace." in changes and "+Hello, edited by Tether." in changes
    assert nvim.lua("return vim.bo.filetype") == "diff"
    nvim.cmd("tabclose")
    cursor_on(nvim, "write a note")
    nvim.cmd("TetherChanges")  # the turn of the message under the cursor
    nvim.wait_for(lambda: nvim.lua("return vim.fn.bufnr('tether://changes/turn-1')") != -1, "turn 1's changes")
    turn1 = nvim.lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr('tether://changes/turn-1'), 0, -1, false)")
    assert "added notes/todo.txt  (turn 1)" in turn1 and "+remember" in turn1
    nvim.cmd("tabclose")

    # you change the README after the agent did: the rewind asks before overwriting it
    (workspace / "README.md").write_text("# Sample\n\nHello, edited by Tether.\nmine\n")
    nvim.stub_select(2)  # Cancel
    cursor_on(nvim, "edit the readme")
    nvim.cmd("TetherRewind")
    nvim.wait_for(nvim.selects, "the rewind question")
    (question,) = nvim.selects()
    assert question["kind"] == "tether.rewind" and "before “edit the readme”" in question["prompt"]
    assert question["items"][0].startswith("Rewind and overwrite what changed since Tether wrote it: README.md")
    assert "restores README.md" in question["items"][0] and question["items"][1] == "Cancel"
    assert (workspace / "README.md").read_text().endswith("mine\n")  # the dry run changed nothing

    nvim.stub_select(1)  # overwrite it
    nvim.cmd("TetherRewind")
    nvim.wait_for(
        lambda: (workspace / "README.md").read_text() == "# Sample\n\nHello from the sample workspace.\n",
        "the README restored",
    )
    text = nvim.wait_chat("[rewound:")
    assert "write a note" in text.splitlines() and "edit the readme" not in text.splitlines()
    assert (workspace / "notes/todo.txt").exists()

    # files only, no conflict: the confirmation lists what it restores
    nvim.stub_select(1)
    cursor_on(nvim, "write a note")
    nvim.cmd("TetherRewind files")
    nvim.wait_for(lambda: not (workspace / "notes/todo.txt").exists(), "the note removed")
    (question,) = nvim.selects()
    assert question["items"] == ["Rewind: restores notes/todo.txt", "Cancel"]
    assert "write a note" in nvim.chat_lines()  # the conversation stays


def test_a_withdrawn_notice_never_splits_a_streaming_word(nvim: Nvim) -> None:
    import json
    import re

    script = json.loads((Path(__file__).parent / "nvim-chat.json").read_text())
    answer = next(r["text"] for r in script["replies"] if r.get("when", {}).get("user") == "^slow")
    open_chat(nvim)
    nvim.send("slow")
    nvim.wait_chat("This answer streams")
    nvim.send("hello two")
    nvim.wait_for(lambda: len(nvim.lua(QUEUE)) == 2, "the queued prompt")
    nvim.cmd("TetherDequeue 1")
    nvim.wait_chat("[withdrawn: hello two]")

    def around() -> tuple[str, str] | None:
        lines = nvim.chat_lines()
        at = lines.index("[withdrawn: hello two]")
        after = [line for line in lines[at + 1 :] if line]
        return (lines[at - 2], after[0]) if after and len(after[0]) > 4 else None

    nvim.wait_for(around, "the answer going on below the notice")
    before, after = around()
    assert re.search(r"[\s.,;:!?]$", before), before  # the text above ends with a whole word
    assert (before.rstrip() + " " + after) in answer  # and the next word starts below it, whole
    nvim.cmd("TetherCancel")
    nvim.turn_done()


def test_a_rewind_reloads_the_open_buffer_and_the_agents_next_read_sees_the_disk(nvim: Nvim, workspace: Path) -> None:
    open_chat(nvim)
    nvim.cmd("TetherMode full-auto")
    nvim.wait_for(lambda: nvim.lua("return require('tether').client().session.mode") == "full-auto", "mode full-auto")
    nvim.cmd(f"tabedit {workspace / 'README.md'}")  # the file is open in a buffer while the agent edits it
    readme = nvim.lua("return vim.fn.bufnr(...)", str(workspace / "README.md"))
    buffer = f"return vim.api.nvim_buf_get_lines({readme}, 0, -1, false)"
    nvim.send("edit the readme")
    nvim.turn_done(count=1)
    nvim.wait_for(lambda: "Hello, edited by Tether." in nvim.lua(buffer), "the edit in the buffer")
    nvim.cmd("silent! wall")  # the user's habit: what the buffer holds goes to disk
    assert "Hello, edited by Tether." in (workspace / "README.md").read_text()

    nvim.stub_select(1)
    cursor_on(nvim, "edit the readme")
    nvim.cmd("TetherRewind files")
    nvim.wait_for(
        lambda: (workspace / "README.md").read_text() == "# Sample\n\nHello from the sample workspace.\n",
        "the README restored",
    )
    nvim.wait_for(
        lambda: nvim.lua(buffer) == ["# Sample", "", "Hello from the sample workspace."], "the buffer reloaded"
    )
    assert nvim.lua(f"return vim.bo[{readme}].modified") is False
    nvim.cmd("silent! wall")  # a :w no longer undoes the rewind
    assert (workspace / "README.md").read_text() == "# Sample\n\nHello from the sample workspace.\n"
    nvim.send("read the readme")
    nvim.turn_done(count=2)
    read = nvim.chat_text().split("▸ Read README.md")[-1]
    assert "3\tHello from the sample workspace." in read and "edited by Tether" not in read
