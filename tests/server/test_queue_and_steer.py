"""Prompts sent while a turn runs (SPEC §3.37): queued in order, withdrawn, cancelled, or
steered into the running turn at a step boundary. In-process handlers over real SQLite
and the scripted provider."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from server_harness import Daemon, running, settings_for

from daemon_harness import EXAMPLES


def _prompt(session_id: str, text: str, **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    if meta:
        params["_meta"] = {"tether": meta}
    return params


async def _queued(daemon: Daemon, session_id: str) -> list[dict[str, Any]]:
    return list((await daemon.call("_tether/session/queue", {"sessionId": session_id}))["queued"])


async def _until_queued(daemon: Daemon, session_id: str, count: int) -> list[dict[str, Any]]:
    async with asyncio.timeout(10):
        while len(queued := await _queued(daemon, session_id)) < count:
            await asyncio.sleep(0.01)
    return queued


def _started(daemon: Daemon, session_id: str) -> bool:
    return any(u["sessionUpdate"] == "agent_message_chunk" for u in daemon.conn.updates(session_id))


async def _slow_turn(daemon: Daemon, session_id: str) -> asyncio.Task[Any]:
    turn = asyncio.create_task(daemon.call("session/prompt", _prompt(session_id, "slow")))
    async with asyncio.timeout(10):
        while not _started(daemon, session_id):
            await asyncio.sleep(0.01)
    return turn


APPROVALS = EXAMPLES / "approvals.json"


async def _held_turn(daemon: Daemon, session_id: str) -> asyncio.Task[Any]:
    """A turn that waits for an approval nobody answers here: it runs until cancelled."""
    turn = asyncio.create_task(daemon.call("session/prompt", _prompt(session_id, "write a note")))
    async with asyncio.timeout(10):
        while not any(m.get("method") == "session/request_permission" for m in daemon.conn.messages()):
            await asyncio.sleep(0.01)
    return turn


async def _acp_session(daemon: Daemon, workspace: Path) -> str:
    await daemon.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    return await daemon.new_session(workspace)


def _user_texts(daemon: Daemon, session_id: str) -> list[str]:
    return [u["content"]["text"] for u in daemon.conn.updates(session_id) if u["sessionUpdate"] == "user_message_chunk"]


async def _stored_user_texts(daemon: Daemon, session_id: str) -> list[str]:
    dump = await daemon.call("_tether/session/dump", {"sessionId": session_id})
    return [m["body"]["content"][0]["text"] for m in dump["messages"] if m["role"] == "user"]


async def test_ten_prompts_sent_during_a_turn_run_in_order_each_answered_by_its_own_turn(
    tmp_path: Path, workspace: Path
):
    # the first turn asks for an approval nobody answers here: it runs until cancelled
    async with running(settings_for(tmp_path, script=str(APPROVALS)), workspace) as daemon:
        session_id = await _acp_session(daemon, workspace)
        first = await _held_turn(daemon, session_id)
        texts = [f"hello number {i}" for i in range(10)]
        prompts = [asyncio.create_task(daemon.call("session/prompt", _prompt(session_id, t))) for t in texts]
        queued = await _until_queued(daemon, session_id, 10)
        assert [q["preview"] for q in queued] == texts and {q["state"] for q in queued} == {"queued"}
        assert not any(p.done() for p in prompts)
        await daemon.call("session/cancel", {"sessionId": session_id})  # the running turn only
        assert (await first)["stopReason"] == "cancelled"
        answers = [await p for p in prompts]
        assert [a["stopReason"] for a in answers] == ["end_turn"] * 10
        turn_ids = [a["_meta"]["tether"]["turnId"] for a in answers]
        assert len(set(turn_ids)) == 10  # a turn each
        # the turns ran in arrival order: the stored history holds the prompts in that order
        assert await _stored_user_texts(daemon, session_id) == ["write a note", *texts]
        reports = (await daemon.call("_tether/session/report", {"sessionId": session_id}))["reports"]
        assert [r["turnId"] for r in reports][1:] == turn_ids
        assert await _queued(daemon, session_id) == []
        # clients are shown the queue as it changes: last, empty
        shown = [
            u["_meta"]["tether"]["queue"]
            for u in daemon.conn.updates(session_id)
            if u["sessionUpdate"] == "session_info_update" and "queue" in u.get("_meta", {}).get("tether", {})
        ]
        assert [q["preview"] for q in max(shown, key=len)] == texts and shown[-1] == []


async def test_dequeue_withdraws_one_prompt_which_answers_cancelled(tmp_path: Path, workspace: Path):
    async with running(settings_for(tmp_path), workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        first = await _slow_turn(daemon, session_id)
        keep = asyncio.create_task(daemon.call("session/prompt", _prompt(session_id, "keep me")))
        drop = asyncio.create_task(daemon.call("session/prompt", _prompt(session_id, "drop me")))
        queued = await _until_queued(daemon, session_id, 2)
        assert (
            await daemon.call("_tether/session/dequeue", {"sessionId": session_id, "queueId": queued[1]["queueId"]})
            == {}
        )
        assert (await drop) == {"stopReason": "cancelled"}
        assert [q["preview"] for q in await _queued(daemon, session_id)] == ["keep me"]
        assert (await first)["stopReason"] == "end_turn" and (await keep)["stopReason"] == "end_turn"
        assert await _stored_user_texts(daemon, session_id) == ["slow", "keep me"]
        try:
            await daemon.call("_tether/session/dequeue", {"sessionId": session_id, "queueId": queued[1]["queueId"]})
        except Exception as exc:  # Answered
            assert getattr(exc, "code", None) == -32602 and "_tether/session/queue" in str(exc)
        else:
            raise AssertionError("dequeue of a prompt no longer queued must fail")


async def test_cancel_stops_the_running_turn_only_then_the_queue_runs(tmp_path: Path, workspace: Path):
    async with running(settings_for(tmp_path, script=str(APPROVALS)), workspace) as daemon:
        session_id = await _acp_session(daemon, workspace)
        first = await _held_turn(daemon, session_id)
        later = [asyncio.create_task(daemon.call("session/prompt", _prompt(session_id, f"then {i}"))) for i in range(3)]
        await _until_queued(daemon, session_id, 3)
        await daemon.call("session/cancel", {"sessionId": session_id})
        assert (await first)["stopReason"] == "cancelled"
        assert [(await t)["stopReason"] for t in later] == ["end_turn"] * 3
        assert await _stored_user_texts(daemon, session_id) == ["write a note", "then 0", "then 1", "then 2"]


async def test_cancel_with_cancel_queued_withdraws_the_queue_too(tmp_path: Path, workspace: Path):
    async with running(settings_for(tmp_path, script=str(APPROVALS)), workspace) as daemon:
        session_id = await _acp_session(daemon, workspace)
        first = await _held_turn(daemon, session_id)
        later = [asyncio.create_task(daemon.call("session/prompt", _prompt(session_id, f"then {i}"))) for i in range(3)]
        await _until_queued(daemon, session_id, 3)
        await daemon.call("session/cancel", {"sessionId": session_id, "_meta": {"tether": {"cancelQueued": True}}})
        assert (await first)["stopReason"] == "cancelled"
        assert [(await t)["stopReason"] for t in later] == ["cancelled"] * 3
        assert await _stored_user_texts(daemon, session_id) == ["write a note"]
        assert await _queued(daemon, session_id) == []
        # the session takes prompts again
        assert (await daemon.call("session/prompt", _prompt(session_id, "hi")))["stopReason"] == "end_turn"


# ---- steering -------------------------------------------------------------------------------

STEPS = 4  # a multi-step turn: each step streams slowly, then reads a file


def _steer_script(tmp: Path) -> Path:
    replies: list[dict[str, Any]] = [{"when": {"user": "^steer"}, "text": "Heard the steer.", "delay_ms": 5}]
    for step in range(1, STEPS):
        replies.append(
            {
                "when": {"user": "^work", "step": step},
                "text": f"Step {step} is reading.",
                "chunk_size": 3,
                "delay_ms": 8,
                "tool_calls": [{"id": f"call_{step}", "name": "read_file", "arguments": {"path": "README.md"}}],
            }
        )
    replies.append({"when": {"user": "^work"}, "text": "All steps done.", "delay_ms": 5})
    replies.append({"text": "Hello."})
    path = tmp / "steer.json"
    path.write_text(json.dumps({"replies": replies}))
    return path


def _check_history(messages: list[dict[str, Any]], steers: list[str]) -> None:
    """Every steered message is stored exactly once, never between a call and its result."""
    open_calls: set[str] = set()
    seen: list[str] = []
    for m in messages:
        body = m["body"]
        if m["role"] == "assistant":
            assert not open_calls, f"a step began before all results of {open_calls} were stored"
            open_calls = {c["id"] for c in body.get("tool_calls", [])}
        elif m["role"] == "tool":
            open_calls.discard(body["tool_call_id"])
        elif m["role"] == "user":
            assert not open_calls, f"a user message landed between calls {open_calls} and their results"
            seen.append(body["content"][0]["text"])
    assert not open_calls
    assert sorted(t for t in seen if t.startswith("steer")) == sorted(steers)  # never lost, never twice


def _check_live(updates: list[dict[str, Any]]) -> None:
    """Live, a steered message is shown when every call shown before it has its result."""
    running: set[str] = set()
    for update in updates:
        kind = update["sessionUpdate"]
        if kind == "tool_call":
            running.add(update["toolCallId"])
        elif kind == "tool_call_update" and update.get("status") in ("completed", "failed"):
            running.discard(update["toolCallId"])
        elif kind == "user_message_chunk":
            assert update["_meta"]["tether"]["steered"] is True
            assert not running, f"a steered message was shown while {running} ran"


async def _steer_scenario(delays: list[float]) -> None:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        workspace = tmp / "ws"
        workspace.mkdir()
        (workspace / "README.md").write_text("# Sample\n")
        async with running(settings_for(tmp, script=str(_steer_script(tmp))), workspace) as daemon:
            session_id = await daemon.new_session(workspace)
            turn = asyncio.create_task(daemon.call("session/prompt", _prompt(session_id, "work through the steps")))
            steers: list[asyncio.Task[Any]] = []
            texts = [f"steer {i}: look at src too" for i in range(len(delays))]
            for text, delay in zip(texts, delays, strict=True):
                await asyncio.sleep(delay)
                steers.append(asyncio.create_task(daemon.call("session/prompt", _prompt(session_id, text, steer=True))))
            answers = [await s for s in steers]
            assert (await turn)["stopReason"] == "end_turn"
            dump = await daemon.call("_tether/session/dump", {"sessionId": session_id})
            _check_history(dump["messages"], texts)
            _check_live(daemon.conn.updates(session_id))
            for text, answer in zip(texts, answers, strict=True):
                # (sent before the turn began, a steer is a prompt: no outcome)
                outcome = answer["_meta"]["tether"].get("steer", {"landed": False})
                assert answer["stopReason"] == "end_turn"
                if outcome["landed"]:  # shown live where it landed, marked, with its position
                    (shown,) = [
                        u
                        for u in daemon.conn.updates(session_id)
                        if u["sessionUpdate"] == "user_message_chunk" and u["content"]["text"] == text
                    ]
                    where = shown["_meta"]["tether"]
                    assert where["steered"] is True and where["messageSeq"] == outcome["messageSeq"]
                    stored = next(m for m in dump["messages"] if m["seq"] == outcome["messageSeq"])
                    assert stored["body"]["content"][0]["text"] == text
                    # the model saw it on its next request: its answer follows it
                    after = [
                        m
                        for m in dump["messages"]
                        if m["seq"] > outcome["messageSeq"]
                        and m["role"] == "assistant"
                        and m["turn_id"] == stored["turn_id"]
                    ]
                    assert after and after[0]["body"]["text"] == "Heard the steer."
                else:  # the turn ended first: it ran as a turn of its own
                    assert outcome == {"landed": False}
                    (own,) = [
                        m for m in dump["messages"] if m["role"] == "user" and m["body"]["content"][0]["text"] == text
                    ]
                    assert own["turn_id"] == answer["_meta"]["tether"]["turnId"]


@hsettings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.floats(min_value=0.0, max_value=0.3), min_size=1, max_size=3))
def test_a_steered_message_lands_at_a_step_boundary_and_is_never_lost(delays: list[float]):
    asyncio.run(_steer_scenario(delays))


async def test_a_steer_lands_mid_turn_and_load_replay_and_dump_restore_show_it_in_place(
    tmp_path: Path, workspace: Path
):
    settings = settings_for(tmp_path, script=str(_steer_script(tmp_path)))
    async with running(settings, workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        turn = asyncio.create_task(daemon.call("session/prompt", _prompt(session_id, "work through the steps")))
        async with asyncio.timeout(10):
            while not any(u.get("toolCallId") == "call_1" for u in daemon.conn.updates(session_id)):
                await asyncio.sleep(0.005)
        answer = await daemon.call("_tether/session/steer", _prompt(session_id, "steer now: stop reading"))
        outcome = answer["_meta"]["tether"]["steer"]
        assert outcome["landed"] is True and 1 <= outcome["step"] < STEPS
        assert (await turn)["stopReason"] == "end_turn"
        live = _user_texts(daemon, session_id)
        assert live == ["steer now: stop reading"]
        kinds = [u["sessionUpdate"] for u in daemon.conn.updates(session_id)]
        at = kinds.index("user_message_chunk")
        # after step 1's call and its result, before the model's next words
        assert "tool_call" in kinds[:at] and "agent_message_chunk" in kinds[at:]
        expected_order = ["work through the steps", "steer now: stop reading"]
        assert await _stored_user_texts(daemon, session_id) == expected_order
        dump = await daemon.call("_tether/session/dump", {"sessionId": session_id})

    async with running(settings, workspace) as again:
        await again.call("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
        replay = again.conn.updates(session_id)
        texts = [(u["sessionUpdate"], u["content"].get("text")) for u in replay if isinstance(u.get("content"), dict)]
        steer_at = texts.index(("user_message_chunk", "steer now: stop reading"))
        (replayed,) = [u for u in replay if u["sessionUpdate"] == "user_message_chunk" and u.get("_meta")]
        assert replayed["_meta"]["tether"] == {"steered": True, "afterStep": outcome["step"]}
        assert ("agent_message_chunk", "Step 1 is reading.") in texts[:steer_at]
        assert ("agent_message_chunk", "Heard the steer.") in texts[steer_at:]
        restored = await again.call("_tether/session/restore", {"snapshot": dump, "cwd": str(workspace)})
        copy = restored["sessionId"]
        assert await _stored_user_texts(again, copy) == expected_order
        copied = await again.call("_tether/session/dump", {"sessionId": copy})
        marks = [m["body"].get("steered") for m in copied["messages"] if m["role"] == "user"]
        assert marks == [None, {"afterStep": outcome["step"]}]


async def test_a_steer_with_no_turn_running_is_just_a_prompt(tmp_path: Path, workspace: Path):
    async with running(settings_for(tmp_path), workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        answer = await daemon.call("session/prompt", _prompt(session_id, "hi", steer=True))
        assert answer["stopReason"] == "end_turn" and "steer" not in answer["_meta"]["tether"]
        assert await _stored_user_texts(daemon, session_id) == ["hi"]


async def test_closing_the_session_withdraws_its_queue_and_starts_no_turn(tmp_path: Path, workspace: Path):
    async with running(settings_for(tmp_path, script=str(APPROVALS)), workspace) as daemon:
        session_id = await _acp_session(daemon, workspace)
        first = await _held_turn(daemon, session_id)
        later = [asyncio.create_task(daemon.call("session/prompt", _prompt(session_id, f"then {i}"))) for i in range(2)]
        await _until_queued(daemon, session_id, 2)
        await daemon.call("session/close", {"sessionId": session_id})
        assert (await first)["stopReason"] == "cancelled"
        assert [(await t)["stopReason"] for t in later] == ["cancelled", "cancelled"]
        await daemon.call("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
        assert await _stored_user_texts(daemon, session_id) == ["write a note"]
        assert await _queued(daemon, session_id) == []  # withdrawn by the user: not reported


async def test_prompts_queued_when_the_daemon_stops_are_reported_not_run_and_never_run(tmp_path: Path, workspace: Path):
    settings = settings_for(tmp_path, script=str(APPROVALS))
    async with running(settings, workspace) as daemon:
        session_id = await _acp_session(daemon, workspace)
        first = await _held_turn(daemon, session_id)
        later = [asyncio.create_task(daemon.call("session/prompt", _prompt(session_id, f"then {i}"))) for i in range(2)]
        await _until_queued(daemon, session_id, 2)
    # the daemon stopped: the running turn was cancelled, the queued prompts did not start
    assert (await first)["stopReason"] == "cancelled"
    assert [(await t)["stopReason"] for t in later] == ["cancelled", "cancelled"]
    # (a stopped daemon's rows are another process's only after a restart: simulated by
    # marking them with a process that is gone)
    db = next((tmp_path / "home").rglob("history.sqlite3"))
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE prompt_queue SET owner = '999999999:1'")
    async with running(settings, workspace) as again:
        await again.call("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
        notices = [
            u["content"]["text"]
            for u in again.conn.updates(session_id)
            if u.get("_meta", {}).get("tether", {}).get("notice")
        ]
        (said,) = [n for n in notices if "not run" in n]
        assert "'then 0'" in said and "'then 1'" in said
        listed = await _queued(again, session_id)
        assert [(q["preview"], q["state"]) for q in listed] == [("then 0", "notRun"), ("then 1", "notRun")]
        assert (await again.call("session/prompt", _prompt(session_id, "hi")))["stopReason"] == "end_turn"
        assert await _stored_user_texts(again, session_id) == ["write a note", "hi"]


async def test_a_steer_during_the_last_step_gets_one_more_step_in_the_same_turn(tmp_path: Path, workspace: Path):
    async with running(settings_for(tmp_path), workspace) as daemon:
        session_id = await daemon.new_session(workspace)
        first = await _slow_turn(daemon, session_id)  # one step, no tool calls
        answer = await daemon.call("session/prompt", _prompt(session_id, "hi, also this", steer=True))
        outcome = answer["_meta"]["tether"]["steer"]
        assert outcome["landed"] is True and outcome["step"] == 1
        done = await first
        assert done["stopReason"] == "end_turn" and done["_meta"]["tether"]["turnId"] == outcome["turnId"]
        # the model answered it in that turn: the script's fallback reply follows it
        updates = daemon.conn.updates(session_id)
        at = next(i for i, u in enumerate(updates) if u["sessionUpdate"] == "user_message_chunk")
        after = "".join(u["content"]["text"] for u in updates[at:] if u["sessionUpdate"] == "agent_message_chunk")
        assert after == "Hello from the scripted provider."


async def test_a_steer_the_turn_ends_before_runs_next_as_its_own_turn_ahead_of_the_queue(
    tmp_path: Path, workspace: Path
):
    async with running(settings_for(tmp_path, script=str(APPROVALS)), workspace) as daemon:
        session_id = await _acp_session(daemon, workspace)
        first = await _held_turn(daemon, session_id)  # its call waits: no step boundary comes
        queued = asyncio.create_task(daemon.call("session/prompt", _prompt(session_id, "queued first")))
        await _until_queued(daemon, session_id, 1)
        steer = asyncio.create_task(daemon.call("session/prompt", _prompt(session_id, "steered later", steer=True)))
        await asyncio.sleep(0.05)
        assert not steer.done()
        await daemon.call("session/cancel", {"sessionId": session_id})
        assert (await first)["stopReason"] == "cancelled"
        answer = await steer
        assert answer["stopReason"] == "end_turn" and answer["_meta"]["tether"]["steer"] == {"landed": False}
        assert (await queued)["stopReason"] == "end_turn"
        # never lost: it ran as a turn of its own, before the prompt queued earlier
        assert await _stored_user_texts(daemon, session_id) == ["write a note", "steered later", "queued first"]


async def test_cancel_queued_also_withdraws_a_steer_that_has_not_landed(tmp_path: Path, workspace: Path):
    async with running(settings_for(tmp_path, script=str(APPROVALS)), workspace) as daemon:
        session_id = await _acp_session(daemon, workspace)
        first = await _held_turn(daemon, session_id)  # its call waits: no step boundary comes
        steer = asyncio.create_task(daemon.call("_tether/session/steer", _prompt(session_id, "steered")))
        await asyncio.sleep(0.05)
        assert not steer.done()
        await daemon.call("session/cancel", {"sessionId": session_id, "_meta": {"tether": {"cancelQueued": True}}})
        assert (await first)["stopReason"] == "cancelled"
        assert (await steer) == {"stopReason": "cancelled"}
        assert await _stored_user_texts(daemon, session_id) == ["write a note"]
