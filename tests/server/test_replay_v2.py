"""The ACP v2 replay of stored messages (`updates/replay_v2.py`, SPEC §12.9).

Read a page at a time it sends what it sends read whole (pages cut between a step and its
tool results, or inside a turn); the message ids are the live turn's: a step streamed again
after a broken stream shares its id, a steered message is `<turnId>.s<seq>`, a later turn starts
its steps at 1 again; an `update_plan` call is followed by the `plan_update` the live call sent.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tether.rendering.replay_v2 import ReplayV2


def _history() -> list[tuple[dict[str, Any], str, str | None, int]]:
    plan = {"entries": [{"content": "read it", "priority": "high", "status": "completed"}]}
    stored = [
        ({"role": "user", "content": [{"type": "text", "text": "first"}]}, "complete", "t1"),
        ({"role": "assistant", "text": "Broken o"}, "incomplete", "t1"),
        (
            {
                "role": "assistant",
                "text": "Reading.",
                "thinking": "hm",
                "tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "a"}}],
            },
            "complete",
            "t1",
        ),
        (
            {
                "role": "tool",
                "tool_call_id": "c1",
                "name": "read_file",
                "content": "A",
                "title": "Read a",
                "kind": "read",
                "locations": [{"path": "/w/a", "line": 1}],
            },
            "complete",
            "t1",
        ),
        (
            {"role": "user", "content": [{"type": "text", "text": "also b"}], "steered": {"afterStep": 1}},
            "complete",
            "t1",
        ),
        (
            {"role": "assistant", "tool_calls": [{"id": "c2", "name": "update_plan", "arguments": plan}]},
            "complete",
            "t1",
        ),
        ({"role": "tool", "tool_call_id": "c2", "name": "update_plan", "content": "plan: 1 step"}, "complete", "t1"),
        ({"role": "assistant", "text": "Done."}, "complete", "t1"),
        ({"role": "user", "content": [{"type": "text", "text": "second"}]}, "complete", "t2"),
        (
            {"role": "assistant", "text": "Again.", "tool_calls": [{"id": "c1", "name": "read_file", "arguments": {}}]},
            "cancelled",
            "t2",
        ),
        ({"role": "user", "content": [{"type": "text", "text": "s"}], "compaction": {"replaced": 9}}, "complete", "t2"),
        ({"role": "user", "content": [{"type": "text", "text": "third"}]}, "complete", "t3"),
        ({"role": "assistant"}, "interrupted", "t3"),
    ]
    return [(body, status, turn, seq) for seq, (body, status, turn) in enumerate(stored, 1)]


def _sent(frames: list[bytes]) -> list[dict[str, Any]]:
    return [json.loads(frame)["params"]["update"] for frame in frames]


def test_the_replay_shows_each_message_under_the_id_it_had_live() -> None:
    replay = ReplayV2("sess_1")
    updates = _sent([*replay.feed(_history()), *replay.finish()])
    ids = [(u["sessionUpdate"], u.get("messageId") or u.get("toolCallId") or u.get("title")) for u in updates]
    assert ids == [
        ("user_message", "t1.0"),
        ("agent_message", "t1.1"),  # set aside, then streamed again as step 1: one message
        ("agent_thought", "t1.1.thought"),
        ("agent_message", "t1.1"),
        ("tool_call_update", "c1"),
        ("user_message", "t1.s5"),  # the stored message's seq, as the live turn named it
        ("tool_call_update", "c2"),
        ("plan_update", None),
        ("agent_message", "t1.3"),
        ("user_message", "t2.0"),
        ("agent_message", "t2.1"),
        ("tool_call_update", "c1"),
        ("notice", "9 earlier messages were summarised to save context"),
        ("user_message", "t3.0"),
        ("notice", "[interrupted: Tether stopped before this turn finished]"),
    ]
    assert updates[1]["_meta"] == {"tether": {"status": "incomplete"}}
    assert updates[4] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "title": "Read a",
        "kind": "read",
        "status": "completed",
        "rawInput": {"path": "a"},
        "content": [{"type": "content", "content": {"type": "text", "text": "A"}}],
        "locations": [{"path": "/w/a", "line": 1}],
    }
    assert updates[5]["_meta"] == {"tether": {"steered": True, "afterStep": 1}}
    assert updates[7]["plan"] == {
        "type": "items",
        "planId": "sess_1.plan",
        "entries": [{"content": "read it", "priority": "high", "status": "completed"}],
    }
    # a call of a cancelled step with no result: failed, as on v1
    assert updates[11]["status"] == "failed" and updates[10]["_meta"] == {"tether": {"status": "cancelled"}}


@pytest.mark.parametrize("size", [1, 2, 3, 5, 64])
def test_a_replay_read_a_page_at_a_time_sends_what_it_sends_read_whole(size: int) -> None:
    history = _history()
    whole = ReplayV2("sess_1")
    expected = [*whole.feed(history), *whole.finish()]
    paged = ReplayV2("sess_1")
    frames: list[bytes] = []
    for start in range(0, len(history), size):
        frames += paged.feed(history[start : start + size])
    frames += paged.finish()
    assert frames == expected


def test_calls_waiting_for_approval_are_replayed_pending() -> None:
    history = _history()[:3]  # the step's call has no result yet: it waits
    replay = ReplayV2("sess_1", {"c1"})
    call = [u for u in _sent([*replay.feed(history), *replay.finish()]) if u["sessionUpdate"] == "tool_call_update"]
    assert call == [
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "title": "read_file",
            "kind": "other",
            "status": "pending",
            "rawInput": {"path": "a"},
        }
    ]
