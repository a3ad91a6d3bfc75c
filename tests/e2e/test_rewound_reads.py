"""The read ledger after a rewind, through a real `tether serve` (scripted model, real
files, real SQLite): a file read only in a rewound turn must be read again before the
model changes it (SPEC 5.11), in the live daemon as after a restart or a fork."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path

REPLIES = [
    {"when": {"user": "^read a", "step": 1}, "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
    {"when": {"user": "^read a", "step": 2}, "text": "a.txt says one."},
    {
        "when": {"user": "^edit a", "step": 1},
        "tool_calls": [
            {
                "id": "edit",
                "name": "edit_file",
                "arguments": {"path": "a.txt", "edits": [{"old_text": "one", "new_text": "two"}]},
            }
        ],
    },
    {"when": {"user": "^edit a", "step": 2}, "text": "done"},
]
NOT_READ = "read 'a.txt' before editing it (read_file), so the edit matches its current text"


def _edit_result(updates: list[dict]) -> dict:
    return [u for u in updates if u.get("toolCallId") == "edit" and u.get("status") in ("completed", "failed")][-1]


def _text(update: dict) -> str:
    return "".join(b.get("content", {}).get("text", "") for b in update.get("content") or [])


async def _edit(session) -> dict:
    turn = session.prompt("edit a")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    return _edit_result(updates)


@pytest.fixture
def script(tmp_path: Path, workspace: Path) -> Path:
    (workspace / "a.txt").write_text("one\n")
    path = tmp_path / "reads.json"
    path.write_text(json.dumps({"replies": REPLIES}))
    return path


@pytest.mark.parametrize("restore", ["conversation", "both"])
async def test_a_read_in_a_rewound_turn_no_longer_allows_an_edit(
    spawn_daemon, workspace: Path, script: Path, restore: str
) -> None:
    daemon = await spawn_daemon("--mode", "full-auto", script=script)
    session = await daemon.client.new_session(workspace)
    await session.prompt("read a").wait()
    answer = await daemon.client.request(
        "_tether/session/rewind", {"sessionId": session.id, "toTurn": 1, "restore": restore}
    )
    assert answer["done"] is True and answer["hiddenMessages"] > 0

    refused = await _edit(session)  # the same live daemon
    assert refused["status"] == "failed" and _text(refused) == NOT_READ
    assert (workspace / "a.txt").read_text() == "one\n"

    # a fork of the rewound session, and the session after a restart, refuse it too
    forked = await daemon.client.request("_tether/session/fork", {"sessionId": session.id})
    other = await spawn_daemon("--mode", "full-auto", script=script)
    for session_id in (forked["sessionId"], session.id):
        again = await _edit(await other.client.resume_session(session_id, workspace))
        assert again["status"] == "failed" and _text(again) == NOT_READ
    assert (workspace / "a.txt").read_text() == "one\n"


async def test_a_read_in_a_kept_turn_still_allows_the_edit(spawn_daemon, workspace: Path, script: Path) -> None:
    """The rebuilt ledger keeps what the remaining conversation read (not an empty one)."""
    daemon = await spawn_daemon("--mode", "full-auto", script=script)
    session = await daemon.client.new_session(workspace)
    await session.prompt("read a").wait()
    await session.prompt("read a again").wait()
    answer = await daemon.client.request(
        "_tether/session/rewind", {"sessionId": session.id, "toTurn": 2, "restore": "conversation"}
    )
    assert answer["done"] is True
    edited = await _edit(session)
    assert edited["status"] == "completed"
    assert (workspace / "a.txt").read_text() == "two\n"
