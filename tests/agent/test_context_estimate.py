"""The context estimate: provider counts as anchors, 4 characters a token after them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.agent import tokens
from tether.agent.journal import TurnJournal
from tether.agent.session import AgentSession
from tether.agent.state import CallOutcome, PendingCall, StepState
from tether.agent.tokens import ContextEstimate, estimate_message
from tether.store import HistoryStore
from tether.tools.base import ToolResult
from tether.tools.sandbox import WorkspaceSandbox
from tether_protocol.conversation import ImageBlock, Message, TextBlock, UserMessage, messages_from_json

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_without_a_provider_count_everything_is_estimated_once():
    messages = messages_from_json([{"role": "user", "content": [{"type": "text", "text": "x" * 400}]}])
    estimate = ContextEstimate()
    first = estimate.used(messages, base_chars=400)
    assert first == 100 + estimate_message(messages[0])


def test_the_provider_count_anchors_and_only_new_messages_are_estimated():
    estimate = ContextEstimate()
    history = messages_from_json(
        [{"role": "user", "content": [{"type": "text", "text": "hi"}]}, {"role": "assistant", "text": "hello"}]
    )
    estimate.anchor(input_tokens=1000, output_tokens=20, message_count=2)
    assert estimate.used(history) == 1020
    (tool,) = messages_from_json([{"role": "tool", "tool_call_id": "c", "name": "grep", "content": "y" * 4000}])
    history.append(tool)
    assert estimate.used(history) == 1020 + estimate_message(tool)
    # asking again does not count the same message twice
    assert estimate.used(history) == 1020 + estimate_message(tool)


def test_a_step_without_usage_keeps_the_previous_anchor():
    estimate = ContextEstimate()
    estimate.anchor(500, 10, 1)
    estimate.anchor(0, 0, 3)
    assert estimate.anchor_tokens == 510 and estimate.anchor_count == 1


async def test_what_the_journal_stores_is_counted_from_its_stored_size_without_encoding_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The view's running size grows as the journal stores messages (the user's, a step's
    reply and results, a checkpoint's): the estimate covers them before anyone asks, equals
    what encoding each message would give, and a tool result's image (shown to the user,
    not read by the model) does not count."""
    ws = tmp_path / "ws"
    ws.mkdir()
    async with await HistoryStore.open(tmp_path / "h.sqlite3") as store:
        await store.create_session("s1", str(ws), "ask")
        session = AgentSession("s1", ws, store, WorkspaceSandbox(ws), "ask")
        session.view_size.used(session.messages)  # the first step's count of the (empty) view
        journal = TurnJournal(session, "t1")
        await journal.begin(UserMessage((TextBlock("fix the parser " * 40),)), blocked=False)
        journal.open(step := StepState(1))
        step.text_parts.append("Reading it.")
        step.calls["c1"] = PendingCall("c1", "shot", arguments={}, ended=True)
        image = (ImageBlock("A" * 2_000_000, "image/png"),)
        journal.record(CallOutcome(step.calls["c1"], ToolResult("an image", blocks=image)))
        await journal.checkpoint()
        journal.open(StepState(2))
        await journal.commit_step()

        encoded: list[Message] = []
        monkeypatch.setattr(tokens, "estimate_message", lambda m: encoded.append(m) or estimate_message(m))
        size = session.view_size
        assert size.tail_counted_to == len(session.messages) == 4
        assert size.used(session.messages) == sum(map(estimate_message, session.messages)) < 1_000
        assert encoded == []  # counted as stored: nothing encoded again
