"""The Python client with prompts queued behind a running turn (SPEC §3.37): each
`PromptTurn` gets its own turn's updates and answer, a steered message lands in the
running turn, a withdrawn one answers `cancelled`; and the client's rewind/changes calls."""

from __future__ import annotations

import asyncio
import json
import os
from typing import TYPE_CHECKING, Any

from daemon_harness import EXAMPLES
from tether_client import TetherClient
from tether_client._client import Session

if TYPE_CHECKING:
    from pathlib import Path

APPROVALS = EXAMPLES / "approvals.json"


class HeldApproval:
    """Holds the first approval until the test lets it go; allows the rest at once."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.release = asyncio.Event()

    async def on_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.set()
        await self.release.wait()
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}


def _said(updates: list[dict[str, Any]]) -> str:
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")


async def test_each_queued_prompt_gets_its_own_turns_updates(spawn_daemon, workspace: Path):
    held = HeldApproval()
    daemon = await spawn_daemon(script=APPROVALS)
    daemon.client.peer.on_request = held.on_request
    session = await daemon.client.new_session(workspace)
    first = session.prompt("write a note")
    first.start()
    async with asyncio.timeout(15):
        await held.asked.wait()
    queued = [session.prompt(f"hello {i}") for i in range(3)]
    for turn in queued:
        turn.start()
    steer = session.steer("and a title")
    steer.start()
    async with asyncio.timeout(15):
        while len(await session.queue()) < 3:
            await asyncio.sleep(0.02)
    listed = await session.queue()
    assert [q["preview"] for q in listed] == ["hello 0", "hello 1", "hello 2"]
    await session.dequeue(listed[1]["queueId"])
    held.release.set()

    assert (await first.wait())["stopReason"] == "end_turn"
    assert (await steer.wait())["stopReason"] == "end_turn"
    assert steer.steer_outcome is not None and steer.steer_outcome["landed"] is True and steer.updates == []
    results = [await turn.wait() for turn in queued]
    assert [r["stopReason"] for r in results] == ["end_turn", "cancelled", "end_turn"]

    # the running turn's updates went to its own object, the steered message among them
    assert _said(first.updates).startswith("Writing.")
    steered = [u for u in first.updates if u["sessionUpdate"] == "user_message_chunk"]
    assert [u["content"]["text"] for u in steered] == ["and a title"]
    assert not any(u.get("toolCallId") for turn in queued for u in turn.updates)
    # each queued turn got its own answer, and only that
    assert _said(queued[0].updates) == _said(queued[2].updates) == "Nothing scripted for that."
    assert queued[1].updates == []
    assert len({first.turn_id, queued[0].turn_id, queued[2].turn_id}) == 3


async def test_the_client_lists_changes_and_rewinds(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon("--mode", "full-auto", script=APPROVALS)
    session = await daemon.client.new_session(workspace)
    await session.prompt("write a note").wait()
    changes = await session.changes(1)
    assert [(f["path"], f["status"]) for f in changes["files"]] == [("notes/todo.txt", "added")]
    preview = await session.rewind(to_turn=1, dry_run=True)
    assert preview["restored"] == ["notes/todo.txt"] and preview["done"] is False
    assert (workspace / "notes/todo.txt").exists()
    done = await session.rewind(to_turn=1)
    assert done["done"] is True and not (workspace / "notes/todo.txt").exists()


async def test_a_queued_turns_updates_read_in_one_chunk_with_the_answer_before_them_are_its_own():
    """Under load the client reads the running turn's answer and the next turn's first
    updates in one chunk (a CI run lost a queued turn's updates this way). A local stand-in
    for the daemon writes exactly that chunk: the updates after the answer belong to the
    next turn, however late the task awaiting the answer resumes."""
    to_client, daemon_out = os.pipe()
    daemon_in, to_daemon = os.pipe()
    client = await TetherClient.over_fds(to_client, to_daemon, framing="ndjson")
    session = Session(client, "s1", {})
    turns = [session.prompt("first"), session.prompt("queued")]
    for turn in turns:
        turn.start()
    received = b""
    while received.count(b"\n") < 2:
        received += await asyncio.to_thread(os.read, daemon_in, 1 << 16)
    first_id, queued_id = (json.loads(line)["id"] for line in received.splitlines())

    def said(text: str) -> dict[str, Any]:
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
        return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": update}}

    def answer(request_id: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "end_turn"}}

    chunk = [said("one"), answer(first_id), said("two")]
    os.write(daemon_out, b"".join(json.dumps(m).encode() + b"\n" for m in chunk))
    os.write(daemon_out, json.dumps(answer(queued_id)).encode() + b"\n")
    async with asyncio.timeout(15):
        assert [(await turn.wait())["stopReason"] for turn in turns] == ["end_turn", "end_turn"]
    assert (_said(turns[0].updates), _said(turns[1].updates)) == ("one", "two")
    os.close(daemon_out)
    os.close(daemon_in)
    await client.close()
