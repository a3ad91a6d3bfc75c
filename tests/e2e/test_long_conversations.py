"""Conversations longer than the model's context window keep working (compaction)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def _script(tmp_path: Path, replies: list[dict]) -> Path:
    path = tmp_path / "long.json"
    path.write_text(json.dumps({"context_window": 600, "replies": replies}))
    return path


COMPACTION = {"when": {"purpose": "compaction"}, "text": "SUMMARY: the user asked for long answers."}


async def test_passing_75_percent_of_the_window_compacts_and_the_conversation_goes_on(
    spawn_daemon, workspace: Path, tmp_path: Path
):
    script = _script(tmp_path, [COMPACTION, {"text": "A long answer. " * 40}])
    daemon = await spawn_daemon(script=script)
    session = await daemon.client.new_session(workspace)
    notices = []
    for n in range(4):
        turn = session.prompt(f"question {n}")
        updates = [u async for u in turn]
        assert turn.stop_reason == "end_turn"
        notices += [u for u in updates if u.get("_meta", {}).get("tether", {}).get("compaction")]
    assert notices, "the conversation never compacted"
    assert notices[0]["_meta"]["tether"]["compaction"]["replaced"] > 0

    # the full history is still stored and replayed; the summary shows as a notice
    other = await spawn_daemon(script=script)
    loaded = await other.client.load_session(session.id, workspace)
    users = [u for u in loaded.updates if u["sessionUpdate"] == "user_message_chunk"]
    assert [u["content"]["text"] for u in users] == [f"question {n}" for n in range(4)]
    assert any(u.get("_meta", {}).get("tether", {}).get("compaction") for u in loaded.updates)
    turn = loaded.prompt("after a restart")
    await turn.wait()
    assert turn.stop_reason == "end_turn"


async def test_a_context_length_error_compacts_and_retries_once(spawn_daemon, workspace: Path, tmp_path: Path):
    script = _script(
        tmp_path,
        [
            COMPACTION,
            {
                "when": {"user": "^too long", "step": 1},
                "error": {"message": "prompt is too long", "kind": "context_length", "after_chunks": 0},
            },
            {"text": "fine"},
        ],
    )
    script.write_text(json.dumps({"context_window": 100000, "replies": json.loads(script.read_text())["replies"]}))
    daemon = await spawn_daemon(script=script)
    session = await daemon.client.new_session(workspace)
    await session.prompt("hello").wait()
    turn = session.prompt("too long for you")
    from tether_client import ClientError

    try:
        updates = [u async for u in turn]
    except ClientError as exc:  # the scripted error repeats after compaction: reported as such
        assert exc.code == -32012 and exc.data["kind"] == "context_length"
        updates = turn.updates
    assert any(u.get("_meta", {}).get("tether", {}).get("compaction") for u in updates)


async def test_a_compacted_session_read_back_from_the_store_sends_what_the_live_one_sends(
    spawn_daemon, workspace: Path, tmp_path: Path
):
    """The summary keeps the last messages before it: a fork (made from the store) and the
    live session send the model the same request for the same prompt, and a daemon that
    loads the session from the store sends it too."""
    script = _script(tmp_path, [COMPACTION, {"text": "A long answer. " * 40}])
    daemon = await spawn_daemon(script=script)
    session = await daemon.client.new_session(workspace)
    for n in range(4):
        await session.prompt(f"question {n}").wait()
    fork = await daemon.client.request("_tether/session/fork", {"sessionId": session.id})
    forked = await daemon.client.resume_session(fork["sessionId"], workspace)

    async def sent(live, prompt: str = "question 4") -> int:  # the scripted model counts its request
        turn = live.prompt(prompt)
        updates = [u async for u in turn]
        return next(u["used"] for u in updates if u["sessionUpdate"] == "usage_update")

    assert await sent(forked) == await sent(session)
    other = await spawn_daemon(script=script)  # the fork, replayed by another daemon
    loaded = await other.client.load_session(fork["sessionId"], workspace)
    assert await sent(loaded, "question 5") == await sent(session, "question 5")
