"""One session open in two windows of the shared daemon: both see it, the first answer wins."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from daemon_harness import until

if TYPE_CHECKING:
    from pathlib import Path


class Person:
    """A window's user: answers each permission request with ``answer`` after ``gate``
    opens (never, without one); keeps what was asked and what was taken back."""

    def __init__(self, answer: str | None = None) -> None:
        self.answer = answer
        self.asked: list[dict] = []
        self.withdrawn: list[str] = []
        self.gate = asyncio.Event()
        if answer is not None:
            self.gate.set()

    async def on_request(self, method: str, params: dict):
        assert method == "session/request_permission", method
        self.asked.append(params)
        try:
            await self.gate.wait()
        except asyncio.CancelledError:  # the daemon sent $/cancel_request
            self.withdrawn.append(params["toolCall"]["toolCallId"])
            raise
        return {"outcome": {"outcome": "selected", "optionId": self.answer}}

    def taken_back(self, window) -> bool:
        """The daemon withdrew its request from this person's window: shown and taken back,
        or (under load) read together with its `$/cancel_request` and so never shown."""
        cancelled = any(method == "$/cancel_request" for method, _params in window.notifications)
        return cancelled and self.withdrawn == [p["toolCall"]["toolCallId"] for p in self.asked]


def _live(session) -> list[dict]:
    """What a window that loaded ``session`` got after the replay (its command menu aside)."""
    return [u for u in session.updates[len(session.replay) :] if u["sessionUpdate"] != "available_commands_update"]


def _statuses(updates: list[dict], call_id: str) -> list[str]:
    return [u["status"] for u in updates if u.get("toolCallId") == call_id and u.get("status")]


async def test_both_windows_see_the_turn_and_the_first_answer_wins(windows, workspace: Path):
    slow, quick = Person(), Person("allow_once")
    first = await windows.open(on_request=slow.on_request)
    second = await windows.open(on_request=quick.on_request)
    session = await first.new_session(workspace)
    watching = await second.load_session(session.id, workspace)
    turn = session.prompt("edit the readme")
    await turn.wait()
    assert turn.stop_reason == "end_turn"
    # both windows were asked; the second answered, the first's request was taken back
    assert [p["toolCall"]["toolCallId"] for p in quick.asked] == ["call_edit"]
    await until(lambda: slow.taken_back(first))
    assert [p["toolCall"]["toolCallId"] for p in slow.asked] in ([], ["call_edit"])  # [] when taken back unread
    assert (workspace / "README.md").read_text().count("Hello, edited by Tether.") == 1
    # the window that did not answer sees the decision as the call's update, in the
    # same order as the window that prompted
    await until(lambda: "completed" in _statuses(_live(watching), "call_edit"))
    seen = [u for u in turn.updates if u["sessionUpdate"] != "available_commands_update"]
    await until(lambda: len(_live(watching)) >= len(seen))
    assert _live(watching)[: len(seen)] == seen
    assert _statuses(turn.updates, "call_edit")[-1] == "completed"
    # the watching window sent no prompt: the turn's end comes to it after its last update
    await until(lambda: len(_live(watching)) > len(seen))
    ended = _live(watching)[len(seen)]
    assert ended["sessionUpdate"] == "session_info_update"
    assert ended["_meta"]["tether"]["turnEnded"] == {
        "turnId": turn.result["_meta"]["tether"]["turnId"],
        "stopReason": "end_turn",
    }
    assert not [u for u in turn.updates if "turnEnded" in u.get("_meta", {}).get("tether", {})]


async def test_a_window_that_loads_a_session_while_it_asks_is_asked_too(windows, workspace: Path):
    nobody, late = Person(), Person("reject_once")
    first = await windows.open(on_request=nobody.on_request)
    second = await windows.open(on_request=late.on_request)
    session = await first.new_session(workspace)
    turn = session.prompt("edit the readme")
    turn.start()
    await until(lambda: len(nobody.asked) == 1)
    watching = await second.load_session(session.id, workspace)
    await turn.wait()  # the late window's "reject" decided it
    assert [p["toolCall"]["toolCallId"] for p in late.asked] == ["call_edit"]
    await until(lambda: nobody.withdrawn == ["call_edit"])
    assert "Hello from the sample workspace." in (workspace / "README.md").read_text()
    await until(lambda: "failed" in _statuses(_live(watching), "call_edit"))


async def test_closing_one_window_leaves_the_others_turn_running(windows, workspace: Path):
    mine, theirs = Person(), Person()
    first = await windows.open(on_request=mine.on_request)
    second = await windows.open(on_request=theirs.on_request)
    session = await first.new_session(workspace)
    await second.load_session(session.id, workspace)
    turn = session.prompt("stream output")  # a command: both windows are asked, nobody answers
    turn.start()
    await until(lambda: len(mine.asked) == len(theirs.asked) == 1)
    await second.close()  # the watcher leaves: the turn of the first window goes on, still asking it
    await asyncio.sleep(0.3)
    assert turn.stop_reason is None and mine.withdrawn == []
    await session.cancel()
    await turn.wait()
    assert turn.stop_reason == "cancelled"


async def test_closing_a_session_in_one_window_leaves_it_open_in_the_other(windows, workspace: Path):
    first = await windows.open()
    second = await windows.open()
    session = await first.new_session(workspace)
    watching = await second.load_session(session.id, workspace)
    await session.close()
    turn = watching.prompt("write a note")  # still live in the second window (it asks: allowed here)
    second.peer.on_request = Person("allow_once").on_request
    await turn.wait()
    assert turn.stop_reason == "end_turn"
    assert (workspace / "notes" / "todo.txt").exists()
    await watching.close()  # the last window to close it closes it
    try:
        await second.request("session/prompt", {"sessionId": session.id, "prompt": [{"type": "text", "text": "hi"}]})
    except Exception as exc:
        assert "unknown session" in str(exc)
    else:
        raise AssertionError("a closed session took a prompt")
