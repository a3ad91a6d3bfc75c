"""The prompt queue and steering over a real daemon (SPEC §3.37): both framings (LSP
Content-Length `tether serve`, NDJSON `tether acp`), and a daemon killed with prompts
queued, whose next `session/load` reports them as not run."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

import pytest

from daemon_harness import BASIC_SCRIPT, EXAMPLES, until

if TYPE_CHECKING:
    from pathlib import Path

APPROVALS = EXAMPLES / "approvals.json"
ACP = [sys.executable, "-m", "tether", "acp", "--provider", "scripted", "--script", str(BASIC_SCRIPT)]


def _params(session_id: str, text: str, **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    if meta:
        params["_meta"] = {"tether": meta}
    return params


async def _queue(daemon, session_id: str) -> list[dict[str, Any]]:
    return list((await daemon.client.request("_tether/session/queue", {"sessionId": session_id}))["queued"])


async def _wait_queued(daemon, session_id: str, count: int) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    async def enough() -> bool:
        found[:] = await _queue(daemon, session_id)
        return len(found) >= count

    async with asyncio.timeout(15):
        while not await enough():
            await asyncio.sleep(0.02)
    return found


async def _start_slow(daemon, session) -> Any:
    first = session.prompt("slow")
    first.start()
    await until(lambda: any(u["sessionUpdate"] == "agent_message_chunk" for u in first.updates))
    return first


class HeldApproval:
    """Answers the one approval the first turn asks for once the test lets it go."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.release = asyncio.Event()

    async def on_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert method == "session/request_permission"
        self.asked.set()
        await self.release.wait()
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}


@pytest.mark.parametrize("framing", ["lsp", "ndjson"])
async def test_ten_prompts_during_one_turn_are_answered_in_order_over_both_framings(
    spawn_daemon, workspace: Path, framing: str
):
    held = HeldApproval()
    script = ("--script", str(APPROVALS))
    daemon = await (
        spawn_daemon(script=APPROVALS)
        if framing == "lsp"
        else spawn_daemon(command=[*ACP[:-2], *script], framing="ndjson")
    )
    daemon.client.peer.on_request = held.on_request
    session = await daemon.client.new_session(workspace)
    first = session.prompt("write a note")
    first.start()
    async with asyncio.timeout(15):
        await held.asked.wait()  # the first turn waits for its approval: it runs until we say
    texts = [f"hello {i}" for i in range(10)]
    answered: list[str] = []
    futures = []
    for text in texts:
        _id, future = daemon.client.peer.request_future("session/prompt", _params(session.id, text))
        future.add_done_callback(lambda _f, text=text: answered.append(text))
        futures.append(future)
    queued = await _wait_queued(daemon, session.id, 10)
    assert [q["preview"] for q in queued] == texts and not answered
    held.release.set()
    assert (await first.wait())["stopReason"] == "end_turn"
    results = [await f for f in futures]
    await asyncio.sleep(0)  # (a future found done is awaited before its callbacks ran)
    assert [r["stopReason"] for r in results] == ["end_turn"] * 10
    assert answered == texts  # each answered when its own turn ended, in arrival order
    turn_ids = [r["_meta"]["tether"]["turnId"] for r in results]
    assert len(set(turn_ids)) == 10 and first.turn_id not in turn_ids
    dump = await daemon.client.request("_tether/session/dump", {"sessionId": session.id})
    users = [m["body"]["content"][0]["text"] for m in dump["messages"] if m["role"] == "user"]
    assert users == ["write a note", *texts]
    assert await _queue(daemon, session.id) == []


@pytest.mark.parametrize("framing", ["lsp", "ndjson"])
async def test_dequeue_cancel_request_and_cancel_queued_over_both_framings(spawn_daemon, workspace: Path, framing: str):
    daemon = await (spawn_daemon() if framing == "lsp" else spawn_daemon(command=ACP, framing="ndjson"))
    session = await daemon.client.new_session(workspace)
    first = await _start_slow(daemon, session)
    peer = daemon.client.peer
    ids_futures = [peer.request_future("session/prompt", _params(session.id, t)) for t in ("a", "b", "c", "d")]
    queued = await _wait_queued(daemon, session.id, 4)
    # withdraw "a" by dequeue, "b" by cancelling its request: both answer cancelled
    await daemon.client.request("_tether/session/dequeue", {"sessionId": session.id, "queueId": queued[0]["queueId"]})
    cancel = "$/cancelRequest" if framing == "lsp" else "$/cancel_request"
    peer.notify(cancel, {"id": ids_futures[1][0]} if framing == "lsp" else {"requestId": ids_futures[1][0]})
    assert (await ids_futures[0][1])["stopReason"] == "cancelled"
    assert (await ids_futures[1][1])["stopReason"] == "cancelled"
    assert [q["preview"] for q in await _queue(daemon, session.id)] == ["c", "d"]
    assert not first.result  # the running turn goes on
    # session/cancel with cancelQueued: the running turn and the rest of the queue
    peer.notify("session/cancel", {"sessionId": session.id, "_meta": {"tether": {"cancelQueued": True}}})
    assert (await first.wait())["stopReason"] == "cancelled"
    assert [(await f)["stopReason"] for _i, f in ids_futures[2:]] == ["cancelled", "cancelled"]
    dump = await daemon.client.request("_tether/session/dump", {"sessionId": session.id})
    assert [m["body"]["content"][0]["text"] for m in dump["messages"] if m["role"] == "user"] == ["slow"]


@pytest.mark.parametrize("framing", ["lsp", "ndjson"])
async def test_a_steer_joins_the_running_turn_at_its_next_step_over_both_framings(
    spawn_daemon, workspace: Path, framing: str
):
    held = HeldApproval()
    daemon = await (
        spawn_daemon(script=APPROVALS)
        if framing == "lsp"
        else spawn_daemon(command=[*ACP[:-2], "--script", str(APPROVALS)], framing="ndjson")
    )
    daemon.client.peer.on_request = held.on_request
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("write a note")  # step 1 writes (asks first), step 2 says "Written."
    turn.start()
    async with asyncio.timeout(15):
        await held.asked.wait()
    _id, steering = daemon.client.peer.request_future("session/prompt", _params(session.id, "and a title", steer=True))
    await asyncio.sleep(0.2)
    assert not steering.done()  # the step's call has no result yet: no boundary
    held.release.set()
    answer = await steering
    outcome = answer["_meta"]["tether"]["steer"]
    assert answer["stopReason"] == "end_turn"
    assert (
        outcome["landed"] is True and outcome["step"] == 1 and outcome["turnId"] == answer["_meta"]["tether"]["turnId"]
    )
    assert (await turn.wait())["stopReason"] == "end_turn" and turn.turn_id == outcome["turnId"]
    kinds = [u["sessionUpdate"] for u in turn.updates]
    at = kinds.index("user_message_chunk")
    shown = turn.updates[at]
    assert shown["content"]["text"] == "and a title"
    assert shown["_meta"]["tether"] == {
        "steered": True,
        "turnId": outcome["turnId"],
        "afterStep": 1,
        "messageSeq": outcome["messageSeq"],
    }
    # after the write and its result, before the next step's words
    assert [u.get("status") for u in turn.updates[:at] if u.get("toolCallId")][-1] == "completed"
    # the model saw it: the script has no reply for it, so its fallback answers (not "Written.")
    after = "".join(u["content"]["text"] for u in turn.updates[at:] if u["sessionUpdate"] == "agent_message_chunk")
    assert after == "Nothing scripted for that."


async def test_prompts_queued_when_the_daemon_is_killed_are_reported_not_run_after_restart(
    spawn_daemon, workspace: Path
):
    first = await spawn_daemon()
    session = await first.client.new_session(workspace)
    await _start_slow(first, session)
    for text in ("first queued", "second queued"):
        first.client.peer.request_future("session/prompt", _params(session.id, text))
    queued = await _wait_queued(first, session.id, 2)
    os.kill(first.pid, signal.SIGKILL)
    await first.client.process.wait()

    second = await spawn_daemon()
    loaded = await second.client.load_session(session.id, workspace)
    notices = [u["content"]["text"] for u in loaded.replay if u.get("_meta", {}).get("tether", {}).get("notice")]
    (said,) = [n for n in notices if "not run" in n]
    assert "'first queued'" in said and "'second queued'" in said
    assert queued[0]["queueId"] in said and queued[1]["queueId"] in said
    listed = await _queue(second, session.id)
    assert [(q["preview"], q["state"]) for q in listed] == [("first queued", "notRun"), ("second queued", "notRun")]
    await asyncio.sleep(0.5)  # never run later
    dump = await second.client.request("_tether/session/dump", {"sessionId": session.id})
    assert [m["body"]["content"][0]["text"] for m in dump["messages"] if m["role"] == "user"] == ["slow"]
    # withdrawn, they are gone
    await second.client.request("_tether/session/dequeue", {"sessionId": session.id, "queueId": listed[0]["queueId"]})
    assert [q["preview"] for q in await _queue(second, session.id)] == ["second queued"]
