"""What the user approves is what runs: the permission prompt shows every character of a
command as itself or as an escape, so a carriage return, a terminal escape sequence or a
bidirectional override cannot make `touch pwned` look like `npm test`."""

from __future__ import annotations

import pytest

from tether.approvals import ApprovalRequest
from tether.server.permission import tool_call_content
from tether.tools.run_command import RunCommandTool
from tether.tools.visible_text import visible
from tether_protocol import unstructure

TRICKS = {
    # the terminal returns to the line start and clears it: only "npm test" stays on screen
    "touch pwned #\r\x1b[Knpm test": "touch pwned #\\r\\x1b[Knpm test",
    # right-to-left override: the rest of the line is drawn reversed
    "npm test \u202e; tset mpn": "npm test \\u202e; tset mpn",
    # zero-width space and joiner, BOM, a C1 control (CSI), DEL, a line separator
    "g\u200bit pu\u200dsh\ufeff\x9b\x7f\u2028x": "g\\u200bit pu\\u200dsh\\ufeff\\x9b\\x7f\\u2028x",
    "backspace\b\b\bok": "backspace\\b\\b\\bok",
    # characters that draw as nothing or a blank: `./test.sh\u034f` looks like `./test.sh`
    "bash ./test.sh\u034f": "bash ./test.sh\\u034f",
    "rm\u00a0-rf x\u3164\u2800\ufe0f": "rm\\xa0-rf x\\u3164\\u2800\\ufe0f",
}


@pytest.mark.parametrize("command", sorted(TRICKS))
def test_invisible_characters_are_shown_escaped_in_the_title_and_the_prompt(command: str) -> None:
    shown = TRICKS[command]
    request = ApprovalRequest(
        "s",
        "c",
        "run_command",
        "execute",
        RunCommandTool().title_for({"command": command}),
        {"command": command},
        "ask",
        command=command,
        cwd=".",
    )
    assert request.title == shown
    (block,) = tool_call_content(request)
    assert unstructure(block) == {"type": "content", "content": {"type": "text", "text": f"$ {shown}\n(in .)"}}


def test_newlines_tabs_and_ordinary_unicode_are_shown_as_they_are() -> None:
    command = "ls\n\tgrep 'café ✓ 日本' notes.md"
    assert visible(command) == command
    assert RunCommandTool().title_for({"command": command}) == command


def test_escaping_twice_changes_nothing_more() -> None:
    once = visible("a\x1b[2J\u202eb")
    assert visible(once) == once == "a\\x1b[2J\\u202eb"
