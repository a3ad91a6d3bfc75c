"""Messages typed while a turn runs, in a real terminal (tmux, 80x24): queued by the daemon
and shown in the live area, withdrawn with `/dequeue`, steered into the running turn with
Ctrl-S or `/steer` and shown where they landed. The turn is held open by a command that
waits for a file (`go`), so nothing depends on timing."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

END = "[end_turn"


def test_messages_typed_mid_turn_are_queued_by_the_daemon_and_the_last_can_be_withdrawn(
    start_chat, chat_workspace: Path
):
    term = start_chat("--mode", "full-auto")
    term.wait_for("full-auto (Shift+Tab)")
    term.send("hold on")
    term.wait_for("│ holding")  # the turn runs, its command waits for `go`
    term.wait_on_screen("Enter queues · Ctrl-S steers")  # the keys, in the status line
    term.send("hello")
    term.send("explain this")
    seen = term.wait_for("queued 2: explain this")
    assert "queued 1: hello" in seen and "/dequeue withdraws the last queued message" in seen
    term.save("queued-two")
    term.send("/dequeue")
    term.wait_for("[withdrawn: 'explain this']")
    seen = term.wait_for("queued 1: hello", absent="queued 2:")
    (chat_workspace / "go").write_text("")
    seen = term.wait_count(END, 2)
    assert seen.index("Held.") < seen.index("› hello") < seen.index("Hello from the scripted chat.")
    first_end = seen.index(END)
    assert seen.index("Held.") < first_end < seen.index("› hello")  # the first turn's numbers, then the next
    assert "› explain this" not in seen and "## Answer" not in seen and "def add" not in seen
    term.wait_for("│ ready", absent="queued 1:")


def test_ctrl_s_steers_a_message_into_the_running_turn_shown_where_it_landed(start_chat, chat_workspace: Path):
    term = start_chat("--mode", "full-auto")
    term.wait_for("full-auto (Shift+Tab)")
    term.send("hold on")
    term.wait_for("│ holding")
    term.type("also check the docs")
    term.keys("C-s")
    term.wait_for("steering: also check the docs")
    term.save("steering")
    (chat_workspace / "go").write_text("")
    seen = term.wait_for(END)
    landed = seen.index("you (steered in after step 1):")
    assert seen.index("╭ ✓") < landed < seen.index("› also check the docs") < seen.index("Noted the steer")
    assert seen.count(END) == 1  # one turn: the message joined it
    assert "Held." not in seen  # the model answered the steered message in that turn
    term.save("steered")
    term.keys("C-d")
    term.wait_for("[exited 0]")

    again = start_chat("--continue")  # the stored session keeps it in place, with the turn's usage
    seen = again.wait_for("[resumed: what follows is new]").split("[resuming")[1]
    assert seen.index("╭ ✓") < seen.index("you (steered in after step 1):") < seen.index("Noted the steer")
    usage = re.search(r"\d+\+\d+ tokens", seen[seen.index("Noted the steer") :])  # the turn's usage line
    assert usage is not None and "[resumed: what" in seen[seen.index("Noted the steer") + usage.end() :]


def test_ctrl_c_cancels_the_turn_and_withdraws_the_queued_messages(start_chat):
    term = start_chat("--mode", "full-auto")
    term.wait_for("full-auto (Shift+Tab)")
    term.send("hold on")
    term.wait_for("│ holding")
    term.send("hello")
    term.wait_for("queued 1: hello")
    term.keys("C-c")
    term.wait_for("[cancelled")
    term.wait_for("[withdrawn: 'hello']")
    seen = term.wait_for("│ ready", absent="queued 1:")
    assert seen.index("╭ ✗") < seen.index("[cancelled")  # the turn's card, then its end
    assert "› hello" not in seen and "Hello from the scripted chat." not in seen


def test_slash_steer_without_a_running_turn_is_a_prompt(start_chat):
    term = start_chat()
    term.wait_for("ask (Shift+Tab)")
    term.send("/steer hello there")
    seen = term.wait_for(END)
    assert "› hello there" in seen and "Hello from the scripted chat." in seen
    assert "steered in" not in seen
