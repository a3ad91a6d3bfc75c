"""Ask-first: a destructive request with no clear target gets a question, not action."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from hooks_harness import User, notices, run, write_script

from tether.hooks.ask_first import clarifying_question

if TYPE_CHECKING:
    from pathlib import Path

VAGUE = ["delete the old stuff", "clean up everything", "remove all of it", "get rid of the junk", "wipe things"]
PRECISE = [
    "delete src/legacy.py",
    "remove the unused import in app.py",
    "clean up `build/`",
    "drop the *.pyc files",
    "read the readme",
    "what does delete_path do?",
    "add a test for everything in parser",
]


@pytest.mark.parametrize("prompt", VAGUE)
def test_a_destructive_vague_prompt_gets_a_question(prompt: str) -> None:
    question = clarifying_question(prompt)
    assert question is not None and "which files or directories do you mean" in question


@pytest.mark.parametrize("prompt", PRECISE)
def test_a_precise_or_harmless_prompt_does_not(prompt: str) -> None:
    assert clarifying_question(prompt) is None


@pytest.mark.parametrize("framing", ["lsp", "ndjson"])
async def test_with_ask_first_on_the_turn_asks_and_nothing_runs(
    spawn_daemon, workspace: Path, tmp_path: Path, user_config: Path, framing: str
):
    user_config.write_text('ask_first = "on"\n')
    script = write_script(
        tmp_path,
        [
            {
                "when": {"user": "old stuff", "step": 1},
                "text": "Deleting.",
                "tool_calls": [{"id": "call_del", "name": "delete_path", "arguments": {"path": "src"}}],
            },
        ],
    )
    user = User("allow_once")
    daemon = await spawn_daemon("--mode", "full-auto", script=script, framing=framing)
    daemon.client.peer.on_request = user.on_request
    session = await daemon.client.new_session(workspace)
    turn, updates = await run(session, "delete the old stuff")
    assert turn.stop_reason == "end_turn"
    assert 'which files or directories do you mean by "old stuff"?' in notices(updates)
    assert not [u for u in updates if u.get("sessionUpdate") == "tool_call"]
    assert (workspace / "src" / "app.py").exists()
    # the question is the turn's answer: stored (a loaded session shows it), the model sees it next turn
    other = await spawn_daemon(script=script, framing=framing)
    loaded = await other.client.load_session(session.id, workspace)
    assert 'which files or directories do you mean by "old stuff"?' in notices(loaded.updates)
    await other.client.close()
    turn, updates = await run(session, "delete src/app.py")
    assert [u["toolCallId"] for u in updates if u.get("sessionUpdate") == "tool_call"] == ["call_del"]
    assert not (workspace / "src" / "app.py").exists()


async def test_ask_first_is_off_by_default(spawn_daemon, workspace: Path, tmp_path: Path):
    script = write_script(
        tmp_path,
        [
            {"when": {"user": "old stuff", "step": 1}, "text": "Nothing to delete here."},
        ],
    )
    daemon = await spawn_daemon(script=script)
    session = await daemon.client.new_session(workspace)
    _, updates = await run(session, "delete the old stuff")
    assert "Nothing to delete here." in notices(updates)
