"""The context estimate: provider counts as anchors, 4 characters a token after them."""

from __future__ import annotations

from tether.agent.tokens import ContextEstimate, estimate_message
from tether_protocol.conversation import messages_from_json


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
