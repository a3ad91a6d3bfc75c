"""A prompt's wire blocks become the conversation's in one step (`_prompt_blocks`), losing nothing."""

from __future__ import annotations

import msgspec
import pytest
from tether_protocol import conversation_blocks, convert
from tether_protocol.acp_v1 import content as wire
from tether_protocol.acp_v1.prompt import PromptParams
from tether_protocol.conversation import EmbeddedResource, ResourceContents, ResourceLink, TextBlock, block_to_json

# Every field each wire block has: a field the generator adds (ACP's `annotations`...) fails
# here until `conversation_blocks` carries it into the conversation.
CARRIED = {
    wire.TextContent: {"text", "meta"},
    wire.ResourceLink: {"uri", "name", "mime_type", "meta"},
    wire.EmbeddedResource: {"resource", "meta"},
    wire.TextResource: {"uri", "text", "mime_type"},
}

SENT = [
    {"type": "text", "text": "look at these", "_meta": {"client": {"tag": 1}}},
    {"type": "text", "text": "plain"},
    {"type": "resource_link", "uri": "file:///ws/a.py", "name": "a.py", "mimeType": "text/x-python", "_meta": {"k": "v"}},
    {"type": "resource_link", "uri": "file:///ws/b.py", "name": "b.py"},
    {"type": "resource", "resource": {"uri": "file:///ws/c.md", "text": "# C\n", "mimeType": "text/markdown"}, "_meta": {"m": 2}},
]


@pytest.mark.parametrize("cls", sorted(CARRIED, key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_each_wire_block_field_is_one_the_conversation_carries(cls: type[msgspec.Struct]) -> None:
    assert {f.name for f in msgspec.structs.fields(cls)} == CARRIED[cls]


def test_a_prompts_blocks_are_stored_as_the_client_sent_them() -> None:
    params = convert({"sessionId": "s", "prompt": SENT}, PromptParams, method="session/prompt")
    blocks = conversation_blocks(params.prompt)
    assert [block_to_json(b) for b in blocks] == SENT  # what the history keeps (and a load replays)
    assert blocks[1] == TextBlock("plain")
    assert blocks[3] == ResourceLink("file:///ws/b.py", "b.py", None, {})
    assert blocks[4] == EmbeddedResource(ResourceContents("file:///ws/c.md", "# C\n", None, "text/markdown", {}), {"_meta": {"m": 2}})


def test_a_block_that_is_not_a_wire_prompt_block_is_a_bug_not_a_silent_drop() -> None:
    with pytest.raises(TypeError, match="not one of ACP v1's prompt content blocks: TextBlock"):
        conversation_blocks([TextBlock("x")])  # type: ignore[list-item]
