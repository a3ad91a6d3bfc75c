"""Typed conversation messages in the store: written through the one converter, read back
as the same values, in the stored JSON shape (snapshot format 1) the store always had."""

from __future__ import annotations

import pytest

from tether.store import HistoryStore, MessageRecord
from tether_protocol.conversation import (
    AssistantMessage,
    Compaction,
    CompactionSummary,
    ConversationError,
    EmbeddedResource,
    Location,
    ResourceContents,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

CONVERSATION = [
    UserMessage((TextBlock("read a.py"), EmbeddedResource(ResourceContents("file:///w/b.md", "# B")))),
    AssistantMessage("Reading.", thinking="plan", tool_calls=(ToolCall("c1", "read_file", {"path": "a.py"}),)),
    ToolResultMessage("c1", "read_file", "1\tx = 1", title="Read a.py", kind="read", locations=(Location("a.py", 1),)),
    AssistantMessage("It sets x."),
    CompactionSummary((TextBlock("Summary: a.py sets x"),), Compaction(replaced=4, kept=0)),
]


async def test_typed_messages_read_back_equal_and_stored_as_before(store: HistoryStore) -> None:
    await store.create_session("s1", "/w", "code")
    first, *rest = [MessageRecord.of(m) for m in CONVERSATION]
    await store.begin_turn("s1", "t1", first)
    await store.append_messages("s1", "t1", rest)
    stored = await store.load_messages("s1")
    assert [record.message for record in stored] == CONVERSATION
    assert [record.role for record in stored] == ["user", "assistant", "tool", "assistant", "user"]
    # the JSON shape of the stored bodies is the one older daemons wrote and read
    bodies = [record.json_body() for record in stored]
    assert bodies[1] == {
        "role": "assistant",
        "text": "Reading.",
        "thinking": "plan",
        "tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "a.py"}}],
    }
    assert bodies[2] == {
        "role": "tool",
        "tool_call_id": "c1",
        "name": "read_file",
        "content": "1\tx = 1",
        "is_error": False,
        "title": "Read a.py",
        "kind": "read",
        "locations": [{"path": "a.py", "line": 1}],
    }
    assert bodies[4]["compaction"] == {"replaced": 4, "kept": 0}


async def test_a_bad_stored_body_names_its_field_when_read_as_a_message(store: HistoryStore) -> None:
    await store.create_session("s1", "/w", "code")
    await store.begin_turn(
        "s1", "t1", MessageRecord("user", {"role": "user", "content": [{"type": "text", "text": 5}]})
    )
    (record,) = await store.load_messages("s1")
    with pytest.raises(ConversationError, match=r"^\.content\[0\]\.text must be a string, not int$"):
        _ = record.message


def test_a_typed_message_must_match_its_record_role() -> None:
    with pytest.raises(TypeError, match="user message"):
        MessageRecord("user", AssistantMessage("hi")).check()
