"""`tether chat` in a real terminal (tmux, 80x24) against `tether serve --provider scripted`:
what a user sees and what their keys do. Screens are kept under the test's tmp dir."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

END = "[end_turn"


def test_a_streamed_answer_is_markdown_with_highlighted_code_and_the_turns_usage(start_chat):
    term = start_chat()
    term.wait_for("ask (Shift+Tab)")
    term.send("explain this")
    seen = term.wait_for(END)
    assert "def add(a, b):" in seen and "return a + b" in seen
    assert "• one" in seen and "• two" in seen  # a Markdown list, not "- one"
    assert "## Answer" not in seen and "```" not in seen  # rendered, not raw
    assert "▸ thought (7 words" in seen  # thinking collapsed to one line
    assert "The user wants an explanation" not in seen
    assert "120+40 tokens" in seen
    term.wait_on_screen(r"\x1b\[[0-9;]*38;5;\d+", regex=True, colours=True)  # the code, highlighted in colour
    term.save("streamed-answer")
    term.keys("C-o")  # the thinking, when asked for
    term.wait_for("The user wants an explanation with code.")


def test_an_edit_is_approved_from_its_coloured_diff(start_chat, chat_workspace: Path):
    term = start_chat()
    term.wait_for("ask (Shift+Tab)")
    term.send("edit the readme")
    seen = term.wait_for("y once · a always · n reject · N never")
    assert "? Edit README.md" in seen
    assert "-Hello from the chat workspace." in seen and "+Hello, edited in the chat." in seen
    assert "mode ask asks before editing README.md" in seen
    term.wait_on_screen(r"\x1b\[[0-9;]*32m\+Hello, edited", regex=True, colours=True)  # added lines are green
    term.save("edit-approval")
    term.type("y")
    seen = term.wait_for(END)  # the turn's end: everything before it is in the scrollback
    assert "→ allow_once" in seen and "Done editing." in seen
    assert (chat_workspace / "README.md").read_text() == "# Chat\n\nHello, edited in the chat.\n"


def test_one_hunk_of_two_is_kept(start_chat, chat_workspace: Path):
    term = start_chat()
    term.wait_for("ask (Shift+Tab)")
    term.send("two hunks")
    term.wait_for("hunks: [x] 1  [x] 2")
    assert "@@ -1,5 +1,5 @@  [hunk 1]" in term.everything()
    term.type("1")
    term.wait_for("hunks: [ ] 1  [x] 2")
    term.save("one-hunk-of-two")
    term.type("y")
    seen = term.wait_for(END)
    assert "→ allow_once (hunks 2 of 2)" in seen
    assert "The user kept hunk 2 of 2 in long.txt" in seen
    lines = (chat_workspace / "long.txt").read_text().splitlines()
    assert lines[1] == "line 2" and lines[29] == "line THIRTY"


def test_a_command_is_shown_with_its_directory_and_reason_and_rejected(start_chat, chat_workspace: Path):
    term = start_chat()
    term.wait_for("ask (Shift+Tab)")
    term.send("run it")
    seen = term.wait_for("y once")
    assert "$ echo chat-ran > ran.txt" in seen
    assert "in . (the workspace)" in seen
    assert "mode ask asks before running" in seen
    term.save("command-approval")
    term.type("n")
    seen = term.wait_for(END)
    assert "After the command." in seen
    assert "→ reject_once" in seen and "✗" in seen
    assert not (chat_workspace / "ran.txt").exists()


def test_ctrl_c_cancels_the_streaming_turn_and_twice_quits(start_chat):
    term = start_chat()
    term.wait_for("ask (Shift+Tab)")
    term.send("slow")
    term.wait_for("This answer")  # streaming, live, before the end
    assert END not in term.everything()
    term.keys("C-c")
    seen = term.wait_for("[cancelled")
    term.wait_for("│ ready")  # the status line is back to ready
    assert "very slowly so that it can be cancelled midway through the stream of words." not in seen
    term.save("cancelled")
    term.send("hello")  # the chat goes on
    term.wait_for("Hello from the scripted chat.")
    term.keys("C-c", "C-c")
    term.wait_for("[exited 0]")


def test_a_message_typed_during_a_turn_is_queued_and_sent_after_it(start_chat):
    term = start_chat()
    term.wait_for("ask (Shift+Tab)")
    term.send("slow")
    term.wait_for("This answer")
    term.send("hello")
    term.wait_for("queued 1: hello")  # in the daemon's queue (its session_info_update)
    seen = term.wait_count(END, 2, timeout=40)
    assert seen.index("very slowly") < seen.index("› hello") < seen.index("Hello from the scripted chat.")


def test_shift_tab_cycles_the_mode_and_the_daemon_uses_it(start_chat, chat_workspace: Path):
    term = start_chat()
    term.wait_for(" ask (Shift+Tab)")
    term.keys("BTab")
    term.wait_for(" auto-edit (Shift+Tab)")
    term.send("edit the readme")
    seen = term.wait_for(END)
    assert "Done editing." in seen and "y once" not in seen  # auto-edit does not ask
    assert "edited in the chat" in (chat_workspace / "README.md").read_text()
    term.keys("BTab", "BTab")
    term.wait_for(" read-only (Shift+Tab)")


def test_continue_and_resume_replay_the_last_session(start_chat):
    first = start_chat()
    first.wait_for("ask (Shift+Tab)")
    first.send("explain this")
    first.wait_for(END)
    first.keys("C-d")
    first.wait_for("[exited 0]")

    again = start_chat("--continue")
    seen = again.wait_for("[resumed: what follows is new]")
    assert "› explain this" in seen and "def add(a, b):" in seen
    # the old turn's end line and usage, from its stored run report, after its answer
    assert seen.index("The end of the answer.") < seen.index("120+40 tokens") < seen.index("[resumed: what")
    again.save("continued")
    again.send("hello")
    seen = again.wait_count(END, 2)
    assert "Hello from the scripted chat." in seen.split("[resumed: what follows is new]")[1]
    again.keys("C-d")
    again.wait_for("[exited 0]")

    picked = start_chat("--resume")
    picked.wait_for("Resume which session?")
    picked.wait_on_screen("› explain this")  # the picker, its first entry chosen
    picked.save("session-picker")
    picked.keys("Enter")
    seen = picked.wait_for("[resumed: what follows is new]")
    assert "Hello from the scripted chat." in seen


def test_slash_and_at_path_completion(start_chat):
    term = start_chat()
    term.wait_for("ask (Shift+Tab)")
    term.type("/com")
    term.wait_for("/compact")
    term.keys("Enter")  # takes the completion
    term.wait_for("› /compact")
    term.keys("C-u")
    term.type("see @lon")
    term.wait_for("long.txt")
    term.keys("Tab")
    term.wait_for("› see @long.txt")


def test_no_color_means_no_colour(start_chat):
    term = start_chat(env={"NO_COLOR": "1"})
    term.wait_for("ask (Shift+Tab)")
    term.send("edit the readme")
    term.wait_for("y once")
    screen = term.wait_on_screen("+Hello, edited in the chat.", colours=True)
    assert not re.search(r"\x1b\[[0-9;]*(3[0-7]|38;5;\d+|9[0-7])m", screen), "no colour codes"
    term.save("no-color")


def test_search_finds_stored_sessions(start_chat):
    term = start_chat()
    term.wait_for("ask (Shift+Tab)")
    term.send("explain this")
    term.wait_for(END)
    term.send("/search answer")
    seen = term.wait_for("hits for 'answer'")
    assert "explain this" in seen.split("hits for 'answer'")[1]
    term.wait_for("[every hit is in this session, above: nothing to resume]")
    term.keys("C-d")
    term.wait_for("[exited 0]")

    other = start_chat()
    other.wait_for("ask (Shift+Tab)")
    other.send("/search answer")
    other.wait_for("Resume which session?")  # the hits' sessions, to pick from
    other.wait_on_screen("› explain this")
    other.save("search-picker")
    other.keys("Enter")
    seen = other.wait_for("[resumed: what follows is new]")
    replay = seen.split("[resuming")[1]
    assert "def add(a, b):" in replay and "120+40 tokens" in replay


def test_a_running_commands_output_shows_live_in_its_card(start_chat, chat_workspace: Path):
    term = start_chat("--mode", "full-auto")
    term.wait_for("full-auto (Shift+Tab)")
    term.send("stream output")
    seen = term.wait_for("│ out-one")  # live, while the command waits for the file `go`
    assert "╭ …" in seen and "Streamed." not in seen
    term.save("live-command-output")
    (chat_workspace / "go").write_text("")
    seen = term.wait_for(END)
    assert "Streamed." in seen and "╭ ✓" in seen and "│ out-two" in seen


def test_a_plan_is_shown_as_a_checklist(start_chat):
    term = start_chat()
    term.wait_for("ask (Shift+Tab)")
    term.send("make a plan")
    seen = term.wait_for(END)
    assert "Planned." in seen and "[x] Read the code" in seen and "[~] Fix the bug" in seen


def test_resume_by_id(start_chat):
    first = start_chat()
    first.wait_for("ask (Shift+Tab)")
    first.send("explain this")
    first.wait_for(END)
    first.keys("C-d")
    first.wait_for("[exited 0]")
    found = re.search(r"\[resuming (sess_\w+)\]", start_chat("--continue").wait_for("[resumed"))
    assert found
    again = start_chat("--resume", found.group(1))
    seen = again.wait_for("[resumed: what follows is new]")
    assert "› explain this" in seen


def test_an_at_path_attaches_the_file_and_the_session_keeps_it(start_chat):
    term = start_chat()
    term.wait_for("ask (Shift+Tab)")
    term.send("see @long.txt please")
    seen = term.wait_for(END)
    assert "+ attached long.txt" in seen
    term.keys("C-d")
    term.wait_for("[exited 0]")
    again = start_chat("--continue")
    seen = again.wait_for("[resumed: what follows is new]")
    assert "› see @long.txt please" in seen and "+ attached long.txt" in seen  # the daemon stored the file


def test_a_daemon_that_cannot_start_is_explained_and_the_chat_ends(start_chat):
    term = start_chat("--mode", "bogus")
    seen = term.wait_for("[exited 1]")
    assert "tether chat: tether: mode = 'bogus' (from flag --mode) is not valid" in seen
    assert "(Shift+Tab)" not in seen  # the input and status line are gone


def _daemon_pids(workspace: Path) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        try:
            argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and str(workspace).encode() in argv:
            found.append(int(name))
    return found


def test_a_turn_waiting_for_approval_survives_a_killed_daemon_and_a_message_waits_for_it(
    start_chat, chat_workspace: Path
):
    first = start_chat()
    first.wait_for("ask (Shift+Tab)")
    first.send("careful edit")
    first.wait_for("y once")
    pids = _daemon_pids(chat_workspace)
    assert len(pids) == 1
    os.kill(pids[0], signal.SIGKILL)
    seen = first.wait_for("[exited 1]")
    assert "`tether chat --continue` picks this session up again" in seen

    again = start_chat("--continue")
    again.wait_for("y once")  # the daemon resumed the turn and asks again
    again.type("y")
    again.wait_for("Finishing")  # the resumed turn streams on
    again.send("hello")
    again.wait_for("[a turn is still running; your message is queued]")
    again.wait_for("Hello from the scripted chat.", timeout=60)
    # the resumed turn's end line is printed when its usage arrives, which may be after the
    # next turn's first text (that text stays in the live area below it until then)
    seen = again.wait_for("(resumed turn)")
    assert seen.index("› hello") < seen.index("(resumed turn)") < seen.index("Hello from the scripted chat.")
    assert seen.count("› hello") == 1
    assert (chat_workspace / "README.md").read_text() == "# Chat\n\nHello, edited in the chat.\n"


def test_ctrl_c_during_an_approval_cancels_the_turn_and_changes_nothing(start_chat, chat_workspace: Path):
    term = start_chat()
    term.wait_for("ask (Shift+Tab)")
    term.send("edit the readme")
    term.wait_for("y once")
    term.keys("C-c")
    seen = term.wait_for("[cancelled")
    assert "→ cancelled" in seen and "not run: the turn was cancelled" in seen
    assert (chat_workspace / "README.md").read_text() == "# Chat\n\nHello from the chat workspace.\n"


def test_resuming_an_unknown_session_says_so(start_chat):
    term = start_chat("--resume", "sess_00000000000000000000000000000000")
    seen = term.wait_for("[exited 1]")
    assert "tether chat: unknown session 'sess_00000000000000000000000000000000'" in seen


def test_allow_always_shows_its_scope_and_rules_lists_and_removes_it(start_chat, chat_workspace: Path):
    term = start_chat()
    term.wait_for("ask (Shift+Tab)")
    term.send("run it")
    seen = term.wait_for("y once")
    # what "a" would store, before it is pressed
    assert "a: Always allow `echo` (any arguments) in this workspace: sandboxed" in seen
    term.save("allow-always-scope")
    term.type("a")
    term.wait_for(END)
    assert (chat_workspace / "ran.txt").read_text() == "chat-ran\n"
    term.send("/rules")
    seen = term.wait_for("approval rules you stored in this workspace")
    listed = seen.split("approval rules you stored")[1]
    assert "#1  allow  `echo` (any arguments)" in listed
    assert "deny  `git push` (any arguments)  (built-in)" in listed
    term.save("rules-list")
    term.send("/rules remove 1")
    term.wait_for("[rule #1 removed: what it allowed is asked again]")
    term.send("/rules remove 1")
    term.wait_for("[rules: no rule #1 in this workspace")
    (chat_workspace / "ran.txt").unlink()
    term.send("run it")
    term.wait_count("a: Always allow `echo`", 2)  # asked again
    term.wait_for("y once")
    term.type("n")
    term.wait_count(END, 2)
    assert not (chat_workspace / "ran.txt").exists()


def test_auto_edit_runs_a_sandboxed_command_unasked_and_the_card_says_why(start_chat, chat_workspace: Path):
    term = start_chat("--mode", "auto-edit")
    term.wait_for("auto-edit (Shift+Tab)")
    term.send("run it")
    seen = term.wait_for(END)
    assert "y once" not in seen  # no prompt
    assert "allowed without asking: it runs in the OS sandbox with no network and writes only inside the" in seen
    assert (chat_workspace / "ran.txt").read_text() == "chat-ran\n"


def test_at_80_columns_the_status_line_keeps_the_context_facts_while_a_turn_runs(start_chat):
    term = start_chat()
    term.wait_for("ask (Shift+Tab)")
    term.send("explain this")
    term.wait_for(END)
    term.send("slow")
    screen = term.wait_on_screen("working")
    status = screen.rstrip("\n").splitlines()[-1]
    assert re.search(r"context \d+/\d+", status) and "working" in status  # whole, beside the shortened rest
    assert len(status.rstrip()) <= 80
    term.save("status-80-columns")
