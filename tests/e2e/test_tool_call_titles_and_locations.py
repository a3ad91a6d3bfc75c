"""Tool-call titles, kinds and locations that clients show as they are (issue 18, defect 4).

What the clients do with them (read in their code):
* Zed, `crates/acp_thread/src/acp_thread.rs` `ToolCall::from_acp`: the title is a label
  rendered as Markdown, **plain text for `kind: "execute"`** (`Markdown::new_text`), and
  `locations` are the call's file links; a permission request's `toolCall` updates the
  same call.
* CodeCompanion.nvim v19.22.0, `interactions/chat/acp/formatters.lua` `build_label`:
  `<Kind>: <target>`, the target being the diff's path, else `locations[1].path`, else
  the title (a command's cwd as location showed "Execute: /path");
  `request_permission.lua` `get_diff`: the diff's file is `locations[1].path`, else the
  diff's path joined to Neovim's cwd (a wrong root for Tether's absolute paths).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

ALLOW = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
COMMAND = "echo a:b && echo ok"


def script(tmp_path: Path) -> Path:
    replies = [
        {
            "when": {"user": "^run it", "step": 1},
            "text": "Running.",
            "tool_calls": [{"id": "call_run", "name": "run_command", "arguments": {"command": COMMAND, "cwd": "src"}}],
        },
        {"when": {"user": "^run it", "step": 2}, "text": "Done."},
        {
            "when": {"user": "^edit the app", "step": 1},
            "text": "Reading.",
            "tool_calls": [{"id": "call_read", "name": "read_file", "arguments": {"path": "src/app.py"}}],
        },
        {
            "when": {"user": "^edit the app", "step": 2},
            "text": "Editing.",
            "tool_calls": [
                {
                    "id": "call_edit",
                    "name": "edit_file",
                    "arguments": {"path": "src/app.py", "edits": [{"old_text": "return 42", "new_text": "return 43"}]},
                }
            ],
        },
        {"when": {"user": "^edit the app", "step": 3}, "text": "Done."},
    ]
    path = tmp_path / "titles.json"
    path.write_text(json.dumps({"model": "scripted-titles", "replies": replies}))
    return path


async def turn(spawn_daemon, tmp_path: Path, workspace: Path, text: str) -> tuple[list[dict], list[dict]]:
    asked: list[dict] = []

    async def on_request(method: str, params: dict):
        assert method == "session/request_permission"
        asked.append(params)
        return ALLOW

    daemon = await spawn_daemon("--mode", "ask", script=script(tmp_path), initialize=False)
    daemon.client.peer.on_request = on_request
    await daemon.client.initialize(clientCapabilities={"fs": {"readTextFile": False, "writeTextFile": False}})
    session = await daemon.client.new_session(workspace)
    return [u async for u in session.prompt(text)], asked


def announced(updates: list[dict], call_id: str) -> dict:
    """The call as the client knows it once announced: the `tool_call` merged with the
    update that completes its arguments (before it runs)."""
    mine = [u for u in updates if u.get("toolCallId") == call_id]
    merged = dict(mine[0])
    merged.update(next(u for u in mine[1:] if "rawInput" in u))
    return merged


async def test_a_command_is_titled_by_itself_with_no_location(spawn_daemon, tmp_path: Path, workspace: Path):
    updates, asked = await turn(spawn_daemon, tmp_path, workspace, "run it")
    call = announced(updates, "call_run")
    assert call["title"] == COMMAND and call["kind"] == "execute"
    assert not any("locations" in u for u in updates if u.get("toolCallId") == "call_run")
    (prompt,) = asked
    tool_call = prompt["toolCall"]
    assert (tool_call["title"], tool_call["kind"]) == (COMMAND, "execute")
    assert "locations" not in tool_call
    # where it runs is still said, in the content
    assert tool_call["content"][0]["content"]["text"] == f"$ {COMMAND}\n(in src)"
    assert [u["status"] for u in updates if u.get("toolCallId") == "call_run" and "status" in u][-1] == "completed"


async def test_the_permission_request_carries_the_calls_title_kind_and_locations(
    spawn_daemon, tmp_path: Path, workspace: Path
):
    updates, asked = await turn(spawn_daemon, tmp_path, workspace, "edit the app")
    app = str(workspace / "src" / "app.py")
    call = announced(updates, "call_edit")
    assert (call["title"], call["kind"], call["locations"]) == ("Edit src/app.py", "edit", [{"path": app}])
    (prompt,) = asked
    tool_call = prompt["toolCall"]
    assert (tool_call["title"], tool_call["kind"]) == ("Edit src/app.py", "edit")
    # the same file, absolute, with the line the change starts at (`return 42` is line 2)
    assert tool_call["locations"] == [{"path": app, "line": 2}]
    assert tool_call["content"][0]["path"] == app
    assert (workspace / "src" / "app.py").read_text() == "def main():\n    return 43\n"
