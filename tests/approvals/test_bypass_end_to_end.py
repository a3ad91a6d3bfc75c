"""Bypass attempts through a real `tether serve` and the scripted model: a denied command
hidden behind a `#` inside a word (or after a newline) is refused in full-auto and
nothing is created; a multi-line command is shown to the user as it will run."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

HIDDEN = "echo x#; touch pwned"
NEWLINE = "ls\n\\touch pwned2"
TWO_LINES = "ls\nrm -rf victim"


def _script(tmp_path: Path) -> Path:
    script = {
        "model": "scripted-bypass",
        "replies": [
            {
                "when": {"user": "^hide it", "step": 1},
                "text": "Trying.",
                "tool_calls": [
                    {"id": "call_hidden", "name": "run_command", "arguments": {"command": HIDDEN}},
                    {"id": "call_newline", "name": "run_command", "arguments": {"command": NEWLINE}},
                ],
            },
            {"when": {"user": "^hide it", "step": 2}, "text": "Refused."},
            {
                "when": {"user": "^two lines", "step": 1},
                "text": "Trying.",
                "tool_calls": [{"id": "call_lines", "name": "run_command", "arguments": {"command": TWO_LINES}}],
            },
            {"when": {"user": "^two lines", "step": 2}, "text": "Rejected."},
        ],
    }
    path = tmp_path / "bypass.json"
    path.write_text(json.dumps(script))
    return path


async def test_a_command_hidden_after_a_hash_is_refused_in_full_auto(spawn_daemon, workspace: Path, tmp_path: Path):
    asked: list[dict] = []

    async def on_request(method: str, params: dict):
        asked.append(params)
        return {"outcome": {"outcome": "selected", "optionId": "reject_once"}}

    daemon = await spawn_daemon("--mode", "full-auto", script=_script(tmp_path), env={"TETHER_DENY_COMMANDS": "touch"})
    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("hide it")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    finals = {
        u["toolCallId"]: u
        for u in updates
        if u.get("toolCallId") in ("call_hidden", "call_newline") and u.get("status") in ("completed", "failed")
    }
    hidden = "".join(b["content"]["text"] for b in finals["call_hidden"]["content"])
    assert finals["call_hidden"]["status"] == "failed"
    assert hidden == "refused by config rule: deny `touch`; this command is never run"
    # tree-sitter reads `\touch` after a newline as an argument of `ls`; the scan that
    # follows /bin/sh's quoting does not, so this is refused too (or at worst asked)
    assert finals["call_newline"]["status"] == "failed"
    assert not (workspace / "pwned").exists() and not (workspace / "pwned2").exists()
    assert all(p["toolCall"]["toolCallId"] == "call_newline" for p in asked)  # never the `#` one


async def test_the_prompt_shows_a_multi_line_command_as_it_will_run(spawn_daemon, workspace: Path, tmp_path: Path):
    asked: list[dict] = []

    async def on_request(method: str, params: dict):
        asked.append(params)
        return {"outcome": {"outcome": "selected", "optionId": "reject_once"}}

    (workspace / "victim").mkdir()
    daemon = await spawn_daemon("--mode", "ask", script=_script(tmp_path))
    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("two lines")
    _ = [u async for u in turn]
    (prompt,) = asked
    # not "ls rm -rf victim": the newline is kept, in the title and in the content
    assert prompt["toolCall"]["title"] == "ls\nrm -rf victim"
    assert prompt["toolCall"]["content"][0]["content"]["text"].startswith("$ ls\nrm -rf victim\n")
    assert (workspace / "victim").is_dir()
