"""What the hook tests share: the test hook command, a user config, the scripted provider."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HOOK = Path(__file__).with_name("hook_script.py")

SCRIPT = {
    "model": "scripted-hooks",
    "replies": [
        {
            "when": {"user": "^run the tests", "step": 1},
            "text": "Running.",
            "tool_calls": [{"id": "call_run", "name": "run_command", "arguments": {"command": "echo all passed"}}],
        },
        {"when": {"user": "^run the tests", "step": 2}, "text": "Ran them."},
        {
            "when": {"user": "^read the readme", "step": 1},
            "text": "Reading.",
            "tool_calls": [{"id": "call_read", "name": "read_file", "arguments": {"path": "README.md"}}],
        },
        {"when": {"user": "^read the readme", "step": 2}, "text": "Read it."},
        {
            "when": {"user": "^push it", "step": 1},
            "text": "Pushing.",
            "tool_calls": [
                {"id": "call_push", "name": "run_command", "arguments": {"command": "git push origin main"}}
            ],
        },
        {"when": {"user": "^push it", "step": 2}, "text": "Done pushing."},
        {
            "when": {"user": "^delete", "step": 1},
            "text": "Deleting.",
            "tool_calls": [{"id": "call_del", "name": "delete_path", "arguments": {"path": "src/app.py"}}],
        },
        {"when": {"user": "^delete", "step": 2}, "text": "Deleted."},
        {"text": "Nothing scripted for that."},
    ],
}


def hook(behaviour: str, log: Path | None = None) -> str:
    """The command line of the test hook."""
    return f"{sys.executable} {HOOK} {behaviour}" + (f" {log}" if log else "")


def toml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string


@pytest.fixture
def user_config(tmp_path: Path) -> Path:
    path = tmp_path / "xdg-config" / "tether" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def write_script(tmp_path: Path, extra: list[dict] | None = None) -> Path:
    script = dict(SCRIPT)
    script["replies"] = [*(extra or []), *SCRIPT["replies"]]
    path = tmp_path / "hooks-script.json"
    path.write_text(json.dumps(script))
    return path


class User:
    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[dict] = []

    async def on_request(self, method: str, params: dict):
        assert method == "session/request_permission", method
        self.prompts.append(params)
        return {"outcome": {"outcome": "selected", "optionId": self.answers.pop(0)}}


async def run(session, text: str):
    turn = session.prompt(text)
    updates = [u async for u in turn]
    return turn, updates


def notices(updates: list[dict]) -> str:
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")


def final(updates: list[dict], call_id: str) -> dict:
    return [u for u in updates if u.get("toolCallId") == call_id and u.get("status") in ("completed", "failed")][-1]


def content_text(update: dict) -> str:
    return "".join(b.get("content", {}).get("text", "") for b in update.get("content") or [])


def approved_by(updates: list[dict], call_id: str) -> str:
    running = [
        u for u in updates if u.get("toolCallId") == call_id and u.get("status") == "in_progress" and "_meta" in u
    ]
    return running[0]["_meta"]["tether"]["approvedBy"] if running else ""
