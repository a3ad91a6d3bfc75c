"""What the shared daemon's split guarantees (issue 32 item 2): a window's settings and the
provider they choose are its own, and a window that leaves takes its place in a session's
audience with it while the session goes on for the others. Real shared daemon, real windows."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import pytest

from tether_client import ClientError

if TYPE_CHECKING:
    from pathlib import Path


def _said(updates: list[dict]) -> str:
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")


async def _turn(window, workspace: Path, text: str) -> list[dict]:
    """The updates of a turn prompted with ``text`` in a new session of ``window``."""
    turn = (await window.new_session(workspace)).prompt(text)
    await turn.wait()
    assert turn.stop_reason == "end_turn", turn.updates
    return turn.updates


async def _answer(window, workspace: Path, text: str) -> str:
    return _said(await _turn(window, workspace, text))


async def test_a_windows_own_script_answers_it_and_no_other_window(windows, workspace: Path, tmp_path: Path):
    own = tmp_path / "own.json"
    own.write_text(json.dumps({"model": "scripted-own", "replies": [{"text": "From this window's own script."}]}))
    daemons = await windows.open()  # the daemon's script, before and after the other window
    mine = await windows.open(initialize=False)
    await mine.initialize(initializationOptions={"script": str(own)})
    assert "Nothing scripted for that." in await _answer(daemons, workspace, "hello")
    assert "From this window's own script." in await _answer(mine, workspace, "hello")
    assert "Nothing scripted for that." in await _answer(daemons, workspace, "hello again")
    later = await windows.open()
    assert "Nothing scripted for that." in await _answer(later, workspace, "hello")
    assert len(windows.daemon_pids()) == 1


async def test_a_window_that_leaves_takes_its_audience_entry_with_it(windows, workspace: Path):
    first = await windows.open()
    second = await windows.open()
    session = await first.new_session(workspace)
    await second.load_session(session.id, workspace)
    await second.close()  # the window leaves (its process ends): only the first sees the session
    turn = session.prompt("hello")
    await turn.wait()  # the session goes on for the window that stays
    assert turn.stop_reason == "end_turn" and "Nothing scripted for that." in _said(turn.updates)
    # closing it in the last window that sees it ends it: no audience entry of the window that left is
    # left to keep it live (a session another window still sees stays live: test_one_session_two_windows.py)
    await session.close()
    with pytest.raises(ClientError) as err:
        await first.request("session/prompt", {"sessionId": session.id, "prompt": [{"type": "text", "text": "hi"}]})
    assert "unknown session" in str(err.value)


class _User:
    """Answers every permission request with ``answer``; keeps what was asked."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.asked: list[str] = []

    async def on_request(self, method: str, params: dict):
        assert method == "session/request_permission", method
        self.asked.append(params["toolCall"]["toolCallId"])
        return {"outcome": {"outcome": "selected", "optionId": self.answer}}


def _command_result(updates: list[dict]) -> dict:
    return [u for u in updates if u.get("toolCallId") == "call_run" and u.get("status")][-1]


async def _run_the_tests(window, workspace: Path) -> dict:
    return _command_result(await _turn(window, workspace, "run the tests"))


async def test_a_windows_deny_rules_are_its_own_and_its_always_rules_everyones(windows, workspace: Path):
    # the first window makes the workspace's gate (no deny rule) and allows the command always
    first_user = _User("allow_always")
    first = await windows.open(on_request=first_user.on_request)
    assert (await _run_the_tests(first, workspace))["status"] == "completed"
    assert first_user.asked == ["call_run"]
    # a window denying `echo` (stricter: allowed) is refused it, though the first window's gate
    # exists and its stored rule allows it: deny rules win, and they are this window's
    strict_user = _User("allow_once")
    strict = await windows.open(on_request=strict_user.on_request, initialize=False)
    answer = await strict.initialize(initializationOptions={"denyCommands": ["echo"]})
    assert "configRefused" not in answer.get("_meta", {}).get("tether", {}), answer
    refused = await _run_the_tests(strict, workspace)
    assert refused["status"] == "failed" and strict_user.asked == []
    assert "never run" in json.dumps(refused), refused
    # the first window's settings are unchanged by the other's options: its command still runs,
    # unasked (its "always" rule), and so does a third window's, whose settings differ again
    assert (await _run_the_tests(first, workspace))["status"] == "completed"
    third_user = _User("reject_once")
    third = await windows.open(on_request=third_user.on_request, initialize=False)
    await third.initialize(initializationOptions={"denyCommands": ["make deploy"]})
    assert (await _run_the_tests(third, workspace))["status"] == "completed"
    assert first_user.asked == ["call_run"] and third_user.asked == []


async def test_a_v2_window_that_made_a_session_keeps_it_when_a_v1_window_closes_it(windows, workspace: Path):
    # the v2 window's `session/new` answer is v2 JSON: it joins the session's audience all the same
    modern = await windows.open(initialize=False)
    answer = await modern.initialize(protocolVersion=2)
    assert answer["protocolVersion"] == 2, answer
    made = await modern.request("session/new", {"cwd": str(workspace), "mcpServers": []})
    session_id = made["sessionId"]
    classic = await windows.open()
    await classic.load_session(session_id, workspace)
    await classic.request("session/close", {"sessionId": session_id})  # the v2 window still sees it
    inserted = await modern.request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hello"}]}
    )
    assert inserted.get("messageId"), inserted


def _kinds(updates: list[dict]) -> set[str]:
    return {u["sessionUpdate"] for u in updates}


async def test_a_v1_and_a_v2_window_watch_one_session_each_in_its_own_version(windows, workspace: Path):
    """One session, one turn, two windows: the v2 window that prompts gets v2 updates (message
    ids, `state_update`), the v1 window that loaded the session gets the same turn in v1."""
    modern = await windows.open(initialize=False)
    assert (await modern.initialize(protocolVersion=2))["protocolVersion"] == 2
    session_id = (await modern.request("session/new", {"cwd": str(workspace), "mcpServers": []}))["sessionId"]
    classic = await windows.open()
    watching = await classic.load_session(session_id, workspace)
    inserted = await modern.request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hello"}]}
    )
    seen_v2 = modern._unclaimed.setdefault(session_id, [])

    def idle() -> bool:
        return any(u.get("sessionUpdate") == "state_update" and u.get("state") == "idle" for u in seen_v2)

    def v1_ended() -> bool:
        return any("turnEnded" in u.get("_meta", {}).get("tether", {}) for u in watching.updates)

    for _ in range(300):
        if idle() and v1_ended():
            break
        await asyncio.sleep(0.02)
    assert idle(), seen_v2
    chunks_v2 = [u for u in seen_v2 if u["sessionUpdate"] == "agent_message_chunk"]
    assert chunks_v2 and all(u["messageId"].startswith(inserted["messageId"].rsplit(".", 1)[0]) for u in chunks_v2)
    assert "user_message" in _kinds(seen_v2)
    v1_updates = watching.updates
    assert _said(v1_updates) == "".join(u["content"]["text"] for u in chunks_v2)  # the same turn, both windows
    assert not _kinds(v1_updates) & {"state_update", "user_message"}, v1_updates
    assert all("messageId" not in u for u in v1_updates if u["sessionUpdate"] == "agent_message_chunk")
    ended = [
        u["_meta"]["tether"]["turnEnded"] for u in v1_updates if "turnEnded" in u.get("_meta", {}).get("tether", {})
    ]
    assert ended == [{"turnId": inserted["messageId"].rsplit(".", 1)[0], "stopReason": "end_turn"}], v1_updates
    # and the other way round: the v1 window prompts, the v2 window sees the turn in v2
    seen_v2.clear()
    turn = watching.prompt("hello again")
    await turn.wait()
    for _ in range(300):
        if idle():
            break
        await asyncio.sleep(0.02)
    assert idle(), seen_v2
    assert _said(turn.updates) == "".join(
        u["content"]["text"] for u in seen_v2 if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert all(u.get("messageId") for u in seen_v2 if u["sessionUpdate"] == "agent_message_chunk"), seen_v2
    assert not {"tool_call", "plan"} & _kinds(seen_v2)
