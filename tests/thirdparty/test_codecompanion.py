"""The real CodeCompanion.nvim v19.22.0 drives Tether in real headless Neovim (issue 18).

Neovim's init.lua is the README's CodeCompanion snippet as it is, the daemon's command
being `python -m tether acp --mode ask --provider scripted --script <script>` (the model is
scripted; everything else is CodeCompanion's own code: its ACP client, its chat buffer,
its approval prompt, its `fs/*` answers, its `/resume`). The user types in the chat buffer
and presses its keys; what they see is read back from the chat buffer, `:messages` and
the disk.
"""

from __future__ import annotations

import json
import re
import sys
from typing import TYPE_CHECKING

import pytest
from codecompanion_driver import CodeCompanionNvim, unpack

if TYPE_CHECKING:
    from pathlib import Path

COMMAND = "ls src && echo listed"
PLAN = "".join(f"step {i}\n" for i in range(1, 11))  # longer than CodeCompanion shows in the chat


def write(call_id: str, name: str, **arguments: object) -> dict:
    return {"id": call_id, "name": name, "arguments": arguments}


REPLIES = [
    {
        "when": {"user": "say hello"},
        "text": "Hello from Tether, streamed in small pieces.",
        "chunk_size": 8,
        "delay_ms": 15,
    },
    {
        "when": {"user": "create the todo", "step": 1},
        "text": "Creating it.",
        "tool_calls": [write("call_new", "write_file", path="notes/todo.txt", content="- buy milk\n")],
    },
    {"when": {"user": "create the todo", "step": 2}, "text": "Created the todo list."},
    {
        "when": {"user": "write the plan", "step": 1},
        "text": "Writing the plan.",
        "tool_calls": [write("call_plan", "write_file", path="notes/plan.txt", content=PLAN)],
    },
    {"when": {"user": "write the plan", "step": 2}, "text": "Wrote the plan."},
    {
        "when": {"user": "run the listing", "step": 1},
        "text": "Listing.",
        "tool_calls": [write("call_run", "run_command", command=COMMAND)],
    },
    {"when": {"user": "run the listing", "step": 2}, "text": "Listed."},
    {
        "when": {"user": "bump the answer", "step": 1},
        "text": "Reading.",
        "tool_calls": [write("call_read", "read_file", path="src/app.py")],
    },
    {
        "when": {"user": "bump the answer", "step": 2},
        "text": "Editing.",
        "tool_calls": [
            write(
                "call_edit", "edit_file", path="src/app.py", edits=[{"old_text": "return 42", "new_text": "return 43"}]
            )
        ],
    },
    {"when": {"user": "bump the answer", "step": 3}, "text": "Bumped."},
    {"when": {"user": "plan the picnic"}, "text": "Bring sandwiches."},
    {
        "when": {"user": "look then answer", "step": 1},
        "text": "Reading it first.",
        "tool_calls": [write("call_look", "read_file", path="src/app.py")],
    },
    {"when": {"user": "look then answer", "step": 2}, "text": "It returns 42."},
]


@pytest.fixture(scope="session")
def plugins(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return unpack(tmp_path_factory.mktemp("thirdparty"))


@pytest.fixture
def nvim(plugins: list[Path], workspace: Path, daemon_env: dict[str, str], tmp_path: Path):
    script = tmp_path / "codecompanion-script.json"
    script.write_text(json.dumps({"model": "scripted-codecompanion", "replies": REPLIES}))
    command = [
        sys.executable,
        "-m",
        "tether",
        "acp",
        "--mode",
        "ask",
        "--provider",
        "scripted",
        "--script",
        str(script),
    ]
    child = CodeCompanionNvim(plugins, command, workspace, daemon_env, tmp_path)
    yield child
    child.close()


def errors(nvim: CodeCompanionNvim) -> list[str]:
    """Errors Neovim showed (a Lua callback's error comes with its stack traceback)."""
    return [line for line in nvim.messages().splitlines() if "Error" in line or "E5108" in line]


def assert_no_errors(nvim: CodeCompanionNvim) -> None:
    lines = nvim.messages().splitlines()
    first = next((i for i, line in enumerate(lines) if "Error" in line or "E5108" in line), None)
    assert first is None, "Neovim showed an error:\n" + "\n".join(lines[first:])


def test_a_chat_streams_the_answer_into_the_chat_buffer(nvim: CodeCompanionNvim):
    nvim.open_chat()
    nvim.send("say hello")
    text = nvim.turns_done(1)
    assert "## CodeCompanion (Tether)\n\nHello from Tether, streamed in small pieces.\n" in text
    assert text.index("say hello") < text.index("## CodeCompanion (Tether)")

    def logged_chunks() -> list[str]:  # CodeCompanion writes its log behind the chat buffer
        found = re.findall(
            r'"sessionUpdate":"agent_message_chunk","content":\{"type":"text","text":"([^"]*)"', nvim.rpc_log()
        )
        return found if "".join(found) == "Hello from Tether, streamed in small pieces." else []

    assert len(nvim.wait_for(logged_chunks, "the answer's chunks in the RPC log")) > 2
    assert_no_errors(nvim)


def test_a_new_file_is_created_once_the_user_accepts_it(nvim: CodeCompanionNvim, workspace: Path):
    """Defect 1: CodeCompanion answers the read of a missing file with empty content."""
    nvim.open_chat()
    nvim.send("create the todo")
    shown = nvim.asked_or_done(1)
    assert "- `g2` - Accept" in shown
    assert "**Proposed edits for `notes/todo.txt`:**" in shown
    assert "+- buy milk" in shown
    target = workspace / "notes" / "todo.txt"
    assert not target.exists()  # nothing is written before the user answers
    nvim.choose("Accept")
    text = nvim.turns_done(1)
    assert "You selected: Accept" in text and "Created the todo list." in text
    assert target.read_text() == "- buy milk\n"
    assert "before overwriting" not in text and "failed" not in text.lower()
    assert_no_errors(nvim)


def test_a_longer_new_file_is_reviewed_and_accepted_in_the_diff_window(nvim: CodeCompanionNvim, workspace: Path):
    """Defect 1 through CodeCompanion's diff window (past `threshold_for_chat` lines): its
    title is the file's path in the workspace (defect 4), the user accepts with its key."""
    nvim.open_chat()
    nvim.send("write the plan")
    assert "**Proposed edits for `notes/plan.txt`:**" in nvim.asked_or_done(1)
    (diff,) = nvim.wait_for(nvim.floats, "the diff window")
    assert diff["title"] == "notes/plan.txt" and diff["current"]
    assert diff["text"] == PLAN  # the new text, shown as it will be written
    key = re.search(r"(\S+) Accept\b", diff["winbar"])
    assert key, diff["winbar"]
    target = workspace / "notes" / "plan.txt"
    assert not target.exists()
    nvim.api.input(key.group(1))  # pressed in the diff window
    text = nvim.turns_done(1)
    assert "You selected: Accept" in text and "Wrote the plan." in text
    assert target.read_text() == PLAN
    assert nvim.floats() == []
    assert_no_errors(nvim)


def test_a_command_is_titled_by_itself_and_an_edit_by_its_path_in_the_workspace(
    nvim: CodeCompanionNvim, workspace: Path
):
    """Defect 4: the approval and the tool line show the command, not "Execute: /path"; the
    diff's file is the workspace's (CodeCompanion joins a diff's path to its cwd when the
    request has no `locations`)."""
    nvim.open_chat()
    nvim.send("run the listing")
    shown = nvim.asked_or_done(1)
    assert f"Execute: {COMMAND}" in shown
    # one "Accept": CodeCompanion keys options by kind and the last of a kind wins, so a
    # second allow_once ("with network") made its Accept grant the network
    assert shown.count("- `g2` - ") == 1
    nvim.choose("Accept")
    text = nvim.turns_done(1)
    assert "Listed." in text
    assert '"optionId":"allow_once"' in nvim.rpc_log() and "allow_once_network" not in nvim.rpc_log()
    assert f"Execute: {COMMAND}" in text.split("You selected: Accept")[1]  # the tool call's line
    assert "Execute: /" not in text and str(workspace) not in text

    nvim.send("bump the answer")
    shown = nvim.asked_or_done(2).split("bump the answer")[1]
    assert "**Proposed edits for `src/app.py`:**" in shown
    assert "-    return 42\n+    return 43" in shown
    nvim.choose("Accept")
    text = nvim.turns_done(2)
    assert "Bumped." in text and "Edit: src/app.py" in text
    assert (workspace / "src" / "app.py").read_text() == "def main():\n    return 43\n"
    assert str(workspace) not in text
    assert_no_errors(nvim)


# A picker plugin's vim.ui.select (telescope, snacks, fzf-lua replace it the same way): it
# records the question and picks the item showing `wanted`, as the user would.
PICKER = """
local wanted = ...
_G.asked = {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.asked, { prompt = opts.prompt, items = items })
  for i, item in ipairs(items) do
    if item:find(wanted, 1, true) then return on_choice(item, i) end
  end
  on_choice(nil, nil)
end
"""


def test_resume_lists_and_loads_the_prompted_session(nvim: CodeCompanionNvim):
    """Defect 3: every chat opens a session it may never prompt; `/resume` lists them all."""
    nvim.open_chat()
    nvim.send("plan the picnic")
    nvim.turns_done(1)
    nvim.open_chat()  # a second chat: its session is never prompted
    nvim.lua(PICKER, "plan the picnic")
    # "/resume", completed with the chat buffer's omnifunc (<C-x><C-o>) and accepted (<C-y>)
    nvim.api.input("Go/resume<C-x><C-o><C-y><Esc>")
    nvim.wait_for(lambda: nvim.lua("return #_G.asked > 0") or errors(nvim), "the session picker or an error")
    assert_no_errors(nvim)
    (asked,) = nvim.lua("return _G.asked")
    assert asked["prompt"] == "Resume Session"
    assert [item for item in asked["items"] if item.endswith(" plan the picnic")]
    assert not [item for item in asked["items"] if "sess_" in item]  # each one shown by its title
    text = nvim.wait_chat("Bring sandwiches.")
    assert "plan the picnic" in text
    assert "Resumed session" in nvim.messages()
    nvim.send("say hello")  # the resumed session goes on
    assert "Hello from Tether, streamed in small pieces." in nvim.turns_done(2)
    assert_no_errors(nvim)


def test_resume_replays_the_texts_of_different_steps_apart_as_a_live_turn_shows_them(nvim: CodeCompanionNvim):
    nvim.open_chat()
    nvim.send("look then answer")
    live = nvim.turns_done(1)
    assert "Reading it first.\n\nRead: src/app.py\n\nIt returns 42." in live  # live: apart, the tool between
    nvim.open_chat()
    nvim.lua(PICKER, "look then answer")
    nvim.api.input("Go/resume<C-x><C-o><C-y><Esc>")
    replayed = nvim.wait_chat("It returns 42.")
    assert "Reading it first.It returns" not in replayed
    assert "Reading it first.\n\nIt returns 42." in replayed  # a paragraph apart, as live
    assert_no_errors(nvim)
