"""A command file edited or removed between two prompts of one session is used as it is now, though
the session keeps the command list it read while nothing changed (services/turn_setup.py): an edit
that keeps the file's size and mtime, a removed file. A real daemon, the scripted provider."""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

_OLD = 1_700_000_000  # an mtime long past


def _write_aged(path: Path, text: str) -> None:
    path.write_text(text)
    os.utime(path, (_OLD, _OLD))


async def _said(session, text: str) -> tuple[str, list[dict]]:
    turn = session.prompt(text)
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    chunks = "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")
    return chunks, updates


async def test_a_command_file_edited_or_removed_between_prompts_is_used_as_it_is_now(
    spawn_daemon, workspace: Path, tmp_path: Path
):
    script = tmp_path / "commands.json"
    replies = [
        {"when": {"user": "^Do alpha.$"}, "text": "ALPHA"},
        {"when": {"user": "^Do bravo.$"}, "text": "BRAVO"},
        {"when": {"user": "^/go$"}, "text": "PLAIN"},
    ]
    script.write_text(json.dumps({"model": "m", "replies": replies}))
    command = workspace / ".tether" / "commands" / "go.md"
    command.parent.mkdir(parents=True)
    _write_aged(command, "---\ndescription: one\n---\nDo alpha.\n")
    daemon = await spawn_daemon(script=script)
    session = await daemon.client.new_session(workspace)
    time.sleep(1.1)  # past the grain since the file's ctime: the session keeps what it read

    assert (await _said(session, "/go"))[0] == "ALPHA"
    assert (await _said(session, "/go"))[0] == "ALPHA"

    _write_aged(command, "---\ndescription: two\n---\nDo bravo.\n")  # same size, same mtime
    said, updates = await _said(session, "/go")
    assert said == "BRAVO"
    (listed,) = [u for u in updates if u["sessionUpdate"] == "available_commands_update"]
    assert {c["name"]: c["description"] for c in listed["availableCommands"]}[
        "go"
    ] == "two (workspace: .tether/commands)"

    time.sleep(1.1)
    assert (await _said(session, "/go"))[0] == "BRAVO"
    command.unlink()
    said, updates = await _said(session, "/go")  # no command of that name: the text goes to the model
    assert said == "PLAIN"
    (listed,) = [u for u in updates if u["sessionUpdate"] == "available_commands_update"]
    assert "go" not in {c["name"] for c in listed["availableCommands"]}
