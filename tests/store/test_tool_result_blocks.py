"""The blocks an MCP tool's result showed the client (images, resources, links), stored
with its tool message in a real SQLite file and in a snapshot: read back as the same typed
values, an additive `blocks` key that older bodies and snapshots simply do not have."""

from __future__ import annotations

import json

import pytest

from tether.store import HistoryStore, MessageRecord, SnapshotError, export_session, import_session
from tether_protocol.conversation import (
    AssistantMessage,
    EmbeddedResource,
    ImageBlock,
    ResourceContents,
    ResourceLink,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

BLOCKS = (
    ImageBlock("iVBORw0KGgo=", "image/png"),
    ResourceLink("demo://resource/1", "Resource 1", "text/plain", {"description": "the first"}),
    EmbeddedResource(ResourceContents("demo://blob", blob="AAEC", mime_type="application/octet-stream")),
)
RESULT = ToolResultMessage(
    "c1",
    "mcp__everything__get-tiny-image",
    "[image image/png, 8 bytes: shown to the user]",
    title="everything: get-tiny-image",
    kind="other",
    blocks=BLOCKS,
)


async def _session(store: HistoryStore, result: ToolResultMessage | MessageRecord = RESULT) -> None:
    await store.create_session("s1", "/w", "code")
    await store.begin_turn("s1", "t1", MessageRecord.of(UserMessage((TextBlock("show me"),))))
    call = AssistantMessage("Showing.", tool_calls=(ToolCall("c1", "mcp__everything__get-tiny-image"),))
    record = result if isinstance(result, MessageRecord) else MessageRecord.of(result)
    await store.append_messages("s1", "t1", [MessageRecord.of(call), record])
    await store.finish_turn("t1", "complete", "end_turn")


async def test_a_tool_message_with_blocks_reads_back_equal_from_the_sqlite_file(store: HistoryStore, query) -> None:
    await _session(store)
    *_, stored = await store.load_messages("s1")
    assert stored.message == RESULT
    ((body,),) = query("SELECT body FROM messages WHERE role = 'tool'", ())
    assert json.loads(body)["blocks"] == [
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
        {
            "type": "resource_link",
            "uri": "demo://resource/1",
            "name": "Resource 1",
            "mimeType": "text/plain",
            "description": "the first",
        },
        {
            "type": "resource",
            "resource": {"uri": "demo://blob", "mimeType": "application/octet-stream", "blob": "AAEC"},
        },
    ]


async def test_a_tool_body_stored_before_blocks_existed_reads_with_none(store: HistoryStore) -> None:
    old = {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "x", "is_error": False}
    await _session(store, MessageRecord("tool", old))
    *_, stored = await store.load_messages("s1")
    assert stored.message == ToolResultMessage("c1", "read_file", "x")
    assert stored.json_body() == old


async def test_a_snapshot_carries_the_blocks_into_another_session(store: HistoryStore) -> None:
    await _session(store)
    snapshot = json.loads(json.dumps(await export_session(store, "s1")))
    assert snapshot["tether_snapshot"] == 1
    copied = await import_session(store, snapshot)
    *_, stored = await store.load_messages(copied)
    assert stored.message == RESULT


@pytest.mark.parametrize(
    ("blocks", "error"),
    [
        ("x", "messages[2].body.blocks must be a list of content blocks, not a string"),
        ([{"type": "image", "data": 5}], "messages[2].body.blocks[0].data must be a string, not int"),
        ([{"type": "resource", "resource": []}], "messages[2].body.blocks[0].resource must be an object, not a list"),
    ],
)
async def test_a_snapshot_with_bad_blocks_is_refused_naming_the_field(store: HistoryStore, blocks, error) -> None:
    await _session(store)
    snapshot = await export_session(store, "s1")
    snapshot["messages"][2]["body"]["blocks"] = blocks
    with pytest.raises(SnapshotError) as caught:
        await import_session(store, snapshot)
    assert str(caught.value) == error
    assert len((await store.list_sessions())[0]) == 1  # nothing was imported
