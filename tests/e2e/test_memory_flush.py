"""The memory flush: when compaction drops messages, the preferences the user stated
(listed by the summariser, here the scripted provider) are proposed for the workspace
MEMORY.md as an edit the user approves or rejects."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from daemon_harness import User

if TYPE_CHECKING:
    from pathlib import Path

SUMMARY = (
    "SUMMARY: the user asked for long answers.\n<preferences>\n- Use tabs in Makefiles\n"
    "- Answer in British English\n</preferences>"
)


def script(tmp_path: Path) -> Path:
    path = tmp_path / "flush.json"
    path.write_text(
        json.dumps(
            {
                "context_window": 600,
                "replies": [
                    {"when": {"purpose": "compaction"}, "text": SUMMARY},
                    {"text": "A long answer. " * 40},
                ],
            }
        )
    )
    return path


async def run_until_compacted(session) -> list[dict]:
    seen: list[dict] = []
    for n in range(6):
        turn = session.prompt(f"question {n}")
        seen += [u async for u in turn]
        assert turn.stop_reason == "end_turn"
        if any(u.get("_meta", {}).get("tether", {}).get("compaction") for u in seen):
            return seen
    raise AssertionError("the conversation never compacted")


@pytest.mark.parametrize(("answer", "framing"), [("allow_once", "ndjson"), ("reject_once", "lsp")])
async def test_stated_preferences_are_proposed_for_the_workspace_memory(
    spawn_daemon, workspace: Path, tmp_path: Path, answer: str, framing: str
) -> None:
    user = User(answer)
    daemon = await spawn_daemon(script=script(tmp_path), framing=framing)
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    updates = await run_until_compacted(session)
    (asked,) = user.prompts
    call = asked["toolCall"]
    assert call["toolCallId"].startswith("memory-flush-") and "preferences" in call["title"]
    (diff,) = call["content"]
    target = workspace / ".tether" / "MEMORY.md"
    assert diff["path"] == str(target) and "- Use tabs in Makefiles" in diff["newText"]
    ended = [u for u in updates if u.get("toolCallId") == call["toolCallId"] and u.get("status")][-1]
    if answer == "allow_once":
        assert ended["status"] == "completed"
        assert target.read_text() == "## Remembered\n\n- Use tabs in Makefiles\n- Answer in British English\n"
    else:
        assert ended["status"] == "failed" and not target.exists()


async def test_preferences_already_remembered_are_not_proposed_again(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".tether").mkdir()
    (workspace / ".tether" / "MEMORY.md").write_text("- Use tabs in Makefiles\n- Answer in British English\n")
    user = User()
    daemon = await spawn_daemon(script=script(tmp_path))
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    updates = await run_until_compacted(session)
    assert user.prompts == [] and not [u for u in updates if str(u.get("toolCallId", "")).startswith("memory")]
