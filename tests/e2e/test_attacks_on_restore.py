"""Hostile snapshots given to `_tether/session/restore` (SPEC §3.28, §3.29), through a real
daemon: a dump that keeps the id of a session of another workspace must never turn that
session into its own, and numbers and raw JSON the format lets through must not break what
reads them later."""

from __future__ import annotations

import asyncio
import json
import os
from typing import TYPE_CHECKING

import pytest

from daemon_harness import text_of
from tether_client import ClientError

if TYPE_CHECKING:
    from pathlib import Path


def _two_workspaces(tmp_path: Path) -> tuple[Path, Path]:
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    for folder, text in ((mine, "my private notes"), (theirs, "planted by the snapshot")):
        folder.mkdir()
        (folder / "README.md").write_text(f"{text}\n")
    return mine.resolve(), theirs.resolve()


def _tool_output(updates: list[dict]) -> str:
    return repr([u.get("content") or u.get("rawOutput") for u in updates if u["sessionUpdate"].startswith("tool_call")])


async def test_a_kept_id_stored_in_another_workspace_does_not_take_over_the_live_session(
    spawn_daemon,
    tmp_path: Path,
) -> None:
    mine, theirs = _two_workspaces(tmp_path)
    daemon = await spawn_daemon()
    client = daemon.client
    session = await client.new_session(mine)
    await session.prompt("hello").wait()
    snapshot = await client.request("_tether/session/dump", {"sessionId": session.id})
    await client.request("session/close", {"sessionId": session.id})
    # the same id, restored (keepId) into another workspace: each workspace has its own store
    restored = await client.request(
        "_tether/session/restore", {"snapshot": snapshot, "keepId": True, "cwd": str(theirs)}
    )
    assert restored["sessionId"] == session.id
    await client.load_session(session.id, mine)
    # opening the other workspace's session of that id while mine is live is refused ...
    with pytest.raises(ClientError) as refused:
        await client.load_session(session.id, theirs)
    assert refused.value.code == -32014
    assert str(mine) in refused.value.message and str(theirs) in refused.value.message
    with pytest.raises(ClientError) as refused_resume:
        await client.resume_session(session.id, theirs)
    assert refused_resume.value.code == -32014
    # ... so a prompt to it still reads my workspace, never the other one
    turn = session.prompt("read the readme")
    await turn.wait()
    shown = _tool_output(turn.updates) + text_of(turn.updates)
    assert "my private notes" in shown and "planted by the snapshot" not in shown
    # once mine is closed, the other one opens (it is a session of its own workspace)
    await client.request("session/close", {"sessionId": session.id})
    other = await client.load_session(session.id, theirs)
    turn = other.prompt("read the readme")
    await turn.wait()
    assert "planted by the snapshot" in _tool_output(turn.updates)


async def test_the_highest_seqs_restore_accepts_leave_the_turns_that_follow_json_safe(
    spawn_daemon,
    workspace: Path,
) -> None:
    daemon = await spawn_daemon()
    client = daemon.client
    session = await client.new_session(workspace)
    await session.prompt("read the readme").wait()
    snapshot = await client.request("_tether/session/dump", {"sessionId": session.id})
    # the highest seqs the format accepts, on the last turn and the last message
    highest = await _highest_seq_accepted(client, snapshot)
    snapshot["turns"][-1]["seq"] = highest
    count = len(snapshot["messages"])
    for i, message in enumerate(snapshot["messages"]):
        message["seq"] = highest - count + 1 + i
    restored = (await client.request("_tether/session/restore", {"snapshot": snapshot}))["sessionId"]
    grown = await client.load_session(restored, workspace)
    for _ in range(3):
        answer = await grown.prompt("read the readme").wait()
        # the next turn's seq is still a JSON-safe integer (a JavaScript client reads it exactly)
        assert answer["_meta"]["tether"]["turnSeq"] <= 2**53 - 1
    dumped = await client.request("_tether/session/dump", {"sessionId": restored})
    seqs = [m["seq"] for m in dumped["messages"]]
    assert len(seqs) == 4 * count and max(seqs) <= 2**53 - 1
    # a rewind by the seq the client read takes out exactly the last prompt and what followed
    last_prompt = [m["seq"] for m in dumped["messages"] if m["role"] == "user"][-1]
    rewound = await client.request(
        "_tether/session/rewind", {"sessionId": restored, "messageSeq": last_prompt, "restore": "conversation"}
    )
    assert rewound["hiddenMessages"] == count


async def _highest_seq_accepted(client, snapshot: dict) -> int:
    """The upper bound restore's refusal of a too-high seq names."""
    probe = {**snapshot, "turns": [{**snapshot["turns"][0], "seq": 2**63}], "messages": [], "reports": []}
    with pytest.raises(ClientError) as refused:
        await client.request("_tether/session/restore", {"snapshot": probe})
    assert refused.value.code == -32602
    words = refused.value.message  # "... turns[0].seq must be between 0 and N, not 2**63"
    return int(words.split(" and ")[1].split(",")[0])


async def test_a_snapshot_path_that_is_a_planted_fifo_is_refused_and_the_daemon_serves_on(
    spawn_daemon,
    workspace: Path,
) -> None:
    """A repository ships `session.json` as a FIFO nobody writes to: restoring it must not
    wait for a writer (that froze every session of the daemon)."""
    planted = workspace / "session.json"
    os.mkfifo(planted)
    daemon = await spawn_daemon()
    client = daemon.client
    with pytest.raises(ClientError) as refused:
        await asyncio.wait_for(client.request("_tether/session/restore", {"path": str(planted)}), 20)
    assert refused.value.code == -32602
    assert refused.value.message == f"invalid params for _tether/session/restore: path {str(planted)!r} is not a file"
    session = await asyncio.wait_for(client.new_session(workspace), 20)
    assert (await session.prompt("hello").wait())["stopReason"] == "end_turn"


async def test_a_snapshot_file_nested_past_the_stack_is_refused_in_words(
    spawn_daemon,
    workspace: Path,
    tmp_path: Path,
) -> None:
    """A crafted file: a tool call's arguments nested 5,000 arrays deep (JSON allows it).
    Reading it must be a refusal naming where, not `-32603` (a RecursionError)."""
    daemon = await spawn_daemon()
    client = daemon.client
    session = await client.new_session(workspace)
    await session.prompt("read the readme").wait()
    snapshot = await client.request("_tether/session/dump", {"sessionId": session.id})
    text = json.dumps(snapshot)
    plain = '"arguments": {"path": "README.md"}'
    assert plain in text
    path = tmp_path / "deep.json"
    path.write_text(
        text.replace(plain, '"arguments": {"path": "README.md", "deep": %s}' % ("[" * 5000 + "]" * 5000), 1)
    )
    with pytest.raises(ClientError) as refused:
        await client.request("_tether/session/restore", {"path": str(path)})
    assert refused.value.code == -32602
    assert refused.value.message.startswith("invalid snapshot: line 1, column ")
    assert refused.value.message.endswith("messages[1] is nested too deeply to be a snapshot's")
    assert "Traceback" not in daemon.stderr()
    assert (await session.prompt("hello").wait())["stopReason"] == "end_turn"  # it serves on
