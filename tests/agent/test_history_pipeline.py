"""The per-call history pipeline: turn limit, tool-result pruning by fullness, pairing repair."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tether.agent.history import CLEARED, MISSING, prepare, repair_pairing
from tether_protocol.conversation import (
    AssistantMessage,
    Compaction,
    CompactionSummary,
    Message,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    messages_to_json,
)


def user(text: str) -> Message:
    return UserMessage((TextBlock(text),))


def assistant(text: str = "", *call_ids: str) -> Message:
    return AssistantMessage(text, tool_calls=tuple(ToolCall(c, "read_file", {}) for c in call_ids))


def tool(call_id: str, content: str = "ok") -> Message:
    return ToolResultMessage(call_id, "read_file", content, is_error=False)


def summary(n: int = 7) -> Message:
    text = f"Summary of the earlier conversation ({n} messages were summarised to save context):\nS"
    return CompactionSummary((TextBlock(text),), Compaction(replaced=n))


def numbered(size: int) -> str:
    # distinct characters everywhere, so a wrong slice cannot pass for the right one
    return "".join(f"{i:07d}," for i in range(size // 8 + 1))[:size]


# ---- turn limiting -------------------------------------------------------------------


def test_keeps_the_last_n_user_turns_with_their_assistant_and_tool_messages():
    history = []
    for i in range(5):
        history += [user(f"u{i}"), assistant("", f"c{i}"), tool(f"c{i}"), assistant(f"a{i}")]
    out = prepare(history, context_window=1000, used_tokens=0, keep_user_turns=2)
    assert out == history[12:]
    assert prepare(history, context_window=1000, used_tokens=0) == history  # default 50


def test_a_leading_compaction_summary_always_stays_and_is_not_a_turn():
    history = [summary(), user("u0"), assistant("a0"), user("u1"), assistant("a1"), user("u2")]
    out = prepare(history, context_window=1000, used_tokens=0, keep_user_turns=2)
    assert out == [history[0], *history[3:]]
    out = prepare(history, context_window=1000, used_tokens=0, keep_user_turns=3)
    assert out == history


def test_the_current_turn_is_kept_even_with_a_limit_below_one():
    history = [user("u0"), assistant("a0"), user("u1"), assistant("", "c1"), tool("c1")]
    assert prepare(history, context_window=1000, used_tokens=0, keep_user_turns=0) == history[2:]


# ---- pruning -------------------------------------------------------------------------


def pruning_history(big: str) -> list[Message]:
    return [
        user("the task " + big),  # 0: the first user message
        assistant("", "old1"),
        tool("old1", big),  # 1, 2: old, prunable
        assistant("", "old2"),
        tool("old2", "short"),  # 3, 4: old but small
        assistant("", "p1"),
        tool("p1", big),  # 5, 6: third-last assistant -> protected
        assistant("", "p2"),
        tool("p2", big),  # 7, 8
        assistant("", "p3"),
        tool("p3", big),  # 9, 10
    ]


def test_below_30_percent_nothing_is_trimmed():
    history = pruning_history(numbered(10_000))
    assert prepare(history, context_window=1000, used_tokens=299) == history


def test_at_30_percent_long_old_results_keep_their_first_and_last_1500_characters():
    big = numbered(10_000)
    history = pruning_history(big)
    out = prepare(history, context_window=1000, used_tokens=300)
    trimmed = out[2].content
    head, marker, tail = trimmed.split("\n")
    assert head == big[:1500] and tail == big[-1500:]
    assert marker == "[... 7000 characters trimmed ...]"
    assert out[2].tool_call_id == "old1" and out[2].name == "read_file"
    assert out[4] is history[4]  # short results stay as they are
    for index in (6, 8, 10):  # results of the last three assistant messages
        assert out[index] is history[index]
    assert out[0] is history[0]


def test_soft_trim_threshold_is_over_4000_characters():
    exact, over = numbered(4000), numbered(4001)
    history = [
        user("u"),
        assistant("", "a"),
        tool("a", exact),
        assistant("", "b"),
        tool("b", over),
        assistant("x"),
        assistant("y"),
        assistant("z"),
    ]
    out = prepare(history, context_window=100, used_tokens=40)
    assert out[2].content == exact
    assert "[... 1001 characters trimmed ...]" in out[4].content


def test_at_50_percent_old_results_are_cleared_but_protected_ones_and_the_task_are_not():
    big = numbered(10_000)
    history = pruning_history(big)
    out = prepare(history, context_window=1000, used_tokens=500)
    assert out[2].content == CLEARED
    assert out[4].content == "short"  # clearing it would make it longer
    for index in (6, 8, 10):
        assert out[index].content == big
    assert out[0].content[0].text == "the task " + big


def test_protection_follows_the_last_three_assistant_messages_not_the_last_three_results():
    big = numbered(5000)
    history = [
        user("u"),
        assistant("", "a", "b"),
        tool("a", big),
        tool("b", big),
        assistant("thinking aloud"),
        assistant("more"),
        user("next"),
    ]
    out = prepare(history, context_window=1000, used_tokens=400)
    # the assistant with calls is the third-last: both its results are protected
    assert out[2].content == big and out[3].content == big
    history.append(assistant("one more"))
    out = prepare(history, context_window=1000, used_tokens=400)
    assert "characters trimmed" in out[2].content and "characters trimmed" in out[3].content


def test_the_input_is_never_mutated():
    history = pruning_history(numbered(10_000))
    history.insert(3, tool("stray"))
    history.append(assistant("", "orphan"))
    before = copy.deepcopy(history)
    for used in (0, 300, 500, 900):
        prepare(history, context_window=1000, used_tokens=used, keep_user_turns=1)
    repair_pairing(history)
    assert history == before


# ---- pairing repair ------------------------------------------------------------------


def test_an_orphan_call_gets_a_synthetic_result_at_the_end_of_its_group():
    history = [user("u"), assistant("", "a", "b"), tool("a"), user("next")]
    out = repair_pairing(history)
    assert out[:3] == history[:3]
    assert out[3] == ToolResultMessage("b", "read_file", MISSING, is_error=True)
    assert out[4] is history[3]


def test_calls_left_open_at_the_end_are_answered():
    history = [user("u"), assistant("", "a")]
    out = repair_pairing(history)
    assert [m.role for m in out] == ["user", "assistant", "tool"] and out[2].tool_call_id == "a"


def test_stray_duplicate_and_leading_results_are_dropped_and_order_is_kept():
    history = [
        tool("gone"),
        user("u"),
        assistant("", "a", "b"),
        tool("b"),
        tool("z"),
        tool("a"),
        tool("a"),
        assistant("done"),
        tool("b"),
    ]
    out = repair_pairing(history)
    assert out == [history[1], history[2], history[3], history[5], history[7]]


def test_prepare_repairs_what_the_turn_limit_cut():
    history = [user("u0"), assistant("", "a"), user("u1"), tool("a"), assistant("", "b")]
    out = prepare(history, context_window=1000, used_tokens=0, keep_user_turns=1)
    assert [m.role for m in out] == ["user", "assistant", "tool"]
    assert out[2].tool_call_id == "b" and out[2].is_error is True


# ---- property ------------------------------------------------------------------------

_IDS = [f"c{i}" for i in range(6)]
_event = st.one_of(
    st.tuples(st.just("user"), st.integers(0, 5000)),
    st.tuples(st.just("assistant"), st.lists(st.sampled_from(_IDS), unique=True, max_size=3)),
    st.tuples(st.just("tool"), st.sampled_from(_IDS), st.integers(0, 6000)),
    st.tuples(st.just("summary")),
)


def _build(events: list[tuple[Any, ...]]) -> list[Message]:
    out: list[Message] = []
    for event in events:
        if event[0] == "user":
            out.append(user("u" * event[1]))
        elif event[0] == "assistant":
            out.append(assistant("a", *event[1]))
        elif event[0] == "tool":
            out.append(tool(event[1], "r" * event[2]))
        else:
            out.append(summary())
    return out


def assert_perfectly_paired(messages: list[Message]) -> None:
    assert not messages or messages[0].role != "tool"
    expected: set[str] = set()
    for message in messages:
        if message.role == "tool":
            assert message.tool_call_id in expected, "stray or duplicate result"
            expected.remove(message.tool_call_id)
            continue
        assert not expected, f"calls {expected} unanswered before the next message"
        if message.role == "assistant":
            expected = {c.id for c in message.tool_calls}
    assert not expected


@settings(max_examples=300, deadline=None)
@given(
    events=st.lists(_event, max_size=30),
    drop_front=st.integers(0, 10),
    used=st.integers(0, 1200),
    keep=st.integers(1, 6),
)
def test_prepare_always_pairs_calls_and_results(events, drop_front, used, keep):
    history = _build(events)[drop_front:]
    before = copy.deepcopy(history)
    out = prepare(history, context_window=1000, used_tokens=used, keep_user_turns=keep)
    assert_perfectly_paired(out)
    assert history == before
    # every non-tool message sent is one of the input's, in the input's order
    positions = {id(m): i for i, m in enumerate(history)}
    sent = [positions[id(m)] for m in out if m.role != "tool"]
    assert sent == sorted(sent)
    assert len([m for m in out if m.role == "user"]) <= keep + 1


def test_the_marker_of_a_turn_interrupted_before_any_output_is_not_sent_to_the_model() -> None:
    """Recovery stores an empty assistant message for it (shown in a replay); Anthropic
    refuses an empty assistant message, and it says nothing to the model anyway."""
    from tether.services.registry import model_view

    stored = [
        ("user", {"role": "user", "content": [{"type": "text", "text": "read it"}]}, "complete"),
        (
            "assistant",
            {
                "role": "assistant",
                "text": "",
                "tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "a"}}],
            },
            "complete",
        ),
        ("tool", {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "A"}, "complete"),
        ("assistant", {"role": "assistant", "text": ""}, "interrupted"),
        ("user", {"role": "user", "content": [{"type": "text", "text": "again"}]}, "complete"),
        ("assistant", {"role": "assistant", "text": "half an ans"}, "interrupted"),
    ]
    assert messages_to_json(model_view(stored)) == [
        {**body, "is_error": False} if role == "tool" else body for i, (role, body, _s) in enumerate(stored) if i != 3
    ]
