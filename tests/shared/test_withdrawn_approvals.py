"""An approval asked of two windows of the shared daemon whose requests are both withdrawn by
the clients (`$/cancel_request` naming the daemon's request), not answered and not closed:
nobody can answer it any more, so the wait ends as for an approval nobody can be asked (the
call is refused, the turn goes on) instead of hanging the turn; one withdrawn window does not
decide while another can still answer."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from daemon_harness import until
from tether_protocol.peer import current_request_id

if TYPE_CHECKING:
    from pathlib import Path


class Withdrawing:
    """A window's client that takes back the daemon's permission request it was sent
    (`$/cancel_request`), then never answers it."""

    def __init__(self) -> None:
        self.client = None
        self.withdrawn: list[str | int] = []

    async def on_request(self, method: str, params: dict):
        assert method == "session/request_permission", method
        request_id = current_request_id.get()
        self.withdrawn.append(request_id)
        self.client.peer.notify("$/cancel_request", {"requestId": request_id})
        await asyncio.Event().wait()


class Answering:
    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.asked = 0
        self.gate = asyncio.Event()

    async def on_request(self, method: str, params: dict):
        self.asked += 1
        await self.gate.wait()
        return {"outcome": {"outcome": "selected", "optionId": self.answer}}


def _edit_update(turn) -> dict:
    return [u for u in turn.updates if u.get("toolCallId") == "call_edit" and u.get("status") == "failed"][-1]


async def test_every_window_withdrawing_the_approval_ends_it_as_unanswerable(windows, workspace: Path):
    first_user, second_user = Withdrawing(), Withdrawing()
    first = first_user.client = await windows.open(on_request=first_user.on_request)
    second = second_user.client = await windows.open(on_request=second_user.on_request)
    session = await first.new_session(workspace)
    await second.load_session(session.id, workspace)
    turn = session.prompt("edit the readme")
    await asyncio.wait_for(turn.wait(), 40)  # before the fix: the approval waited for ever
    assert len(first_user.withdrawn) == len(second_user.withdrawn) == 1
    assert turn.stop_reason == "end_turn"
    failed = _edit_update(turn)
    text = failed["content"][0]["content"]["text"]
    assert "needs the user's approval" in text and "session/request_permission" in text, text
    assert "cancelled" in text, text
    assert "Hello from the sample workspace." in (workspace / "README.md").read_text()


async def test_one_window_withdrawing_leaves_the_approval_to_the_other(windows, workspace: Path):
    withdrawing, answering = Withdrawing(), Answering("allow_once")
    first = withdrawing.client = await windows.open(on_request=withdrawing.on_request)
    second = await windows.open(on_request=answering.on_request)
    session = await first.new_session(workspace)
    await second.load_session(session.id, workspace)
    turn = session.prompt("edit the readme")
    turn.start()
    await until(lambda: len(withdrawing.withdrawn) == 1 and answering.asked == 1)
    await asyncio.sleep(0.3)  # the withdrawal is read: it must not decide the approval
    assert turn.stop_reason is None
    answering.gate.set()
    await asyncio.wait_for(turn.wait(), 60)
    assert turn.stop_reason == "end_turn"
    assert "Hello, edited by Tether." in (workspace / "README.md").read_text()
