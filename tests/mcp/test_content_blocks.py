"""An MCP tool's result as the conversation's content blocks: each MCP content type becomes
a typed block, rendered to the ACP content block clients have always been sent (same keys,
same order), and stored with the tool's message so a replay shows it again."""

from __future__ import annotations

import json

import mcp_types as types

from tether.agent.sink import BlockContent, TextContent, ToolCallPatch
from tether.mcp.tools import MAX_SHOWN_DATA, convert_result
from tether.rendering.acp_v1 import render
from tether_protocol import dumps, loads
from tether_protocol.conversation import (
    AudioBlock,
    EmbeddedResource,
    ImageBlock,
    ResourceContents,
    ResourceLink,
    ToolResultMessage,
    message_from_json,
    message_to_json,
)

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

# One item of each MCP content type, the block it becomes, and the ACP content block the
# wire carried for it before the blocks were typed (key order included).
CASES = [
    (
        types.ImageContent(data=PNG, mime_type="image/png"),
        ImageBlock(PNG, "image/png"),
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        "[image image/png, 72 bytes: shown to the user]",
    ),
    (
        types.AudioContent(data="UklGRg==", mime_type="audio/wav"),
        AudioBlock("UklGRg==", "audio/wav"),
        {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
        "[audio audio/wav, 6 bytes: shown to the user]",
    ),
    (
        types.ResourceLink(name="readme", uri="file:///w/README.md", mime_type="text/markdown", description="Docs"),
        ResourceLink("file:///w/README.md", "readme", "text/markdown", {"description": "Docs"}),
        {"type": "resource_link", "uri": "file:///w/README.md", "name": "readme", "mimeType": "text/markdown",
         "description": "Docs"},
        "[resource link: readme <file:///w/README.md>]",
    ),
    (
        types.ResourceLink(name="bare", uri="demo://resource/1", mime_type="", description=""),
        ResourceLink("demo://resource/1", "bare"),
        {"type": "resource_link", "uri": "demo://resource/1", "name": "bare"},
        "[resource link: bare <demo://resource/1>]",
    ),
    (
        types.EmbeddedResource(resource=types.TextResourceContents(uri="demo://notes", mime_type="text/plain", text="")),
        EmbeddedResource(ResourceContents("demo://notes", text="", mime_type="text/plain")),
        {"type": "resource", "resource": {"uri": "demo://notes", "mimeType": "text/plain", "text": ""}},
        "[resource demo://notes]\n",
    ),
    (
        types.EmbeddedResource(resource=types.BlobResourceContents(uri="demo://blob", blob="AAEC")),
        EmbeddedResource(ResourceContents("demo://blob", blob="AAEC")),
        {"type": "resource", "resource": {"uri": "demo://blob", "blob": "AAEC"}},
        "[resource demo://blob: binary, 3 bytes]",
    ),
]


def test_each_mcp_content_type_becomes_its_block_and_the_acp_block_the_wire_carried() -> None:
    items = [types.TextContent(text="Here they are.")] + [item for item, *_ in CASES]
    result = convert_result(types.CallToolResult(content=items))
    assert result.blocks == tuple(block for _, block, *_ in CASES)
    assert result.text == "\n".join(["Here they are.", *(text for *_, text in CASES)])
    update = render(ToolCallPatch("c1", "completed", content=(
        TextContent(result.text), *(BlockContent(b) for b in result.blocks),
    )))
    assert update is not None
    expected = [{"type": "content", "content": {"type": "text", "text": result.text}}] + [
        {"type": "content", "content": wire} for _, _, wire, _ in CASES
    ]
    assert json.dumps(loads(dumps(update))["content"]) == json.dumps(expected)  # keys in the wire's order


def test_blocks_over_the_size_shown_per_call_are_named_to_the_model_and_not_shown() -> None:
    big = "A" * (MAX_SHOWN_DATA - 300)
    items = [types.ImageContent(data=big, mime_type="image/png"), types.ImageContent(data=PNG, mime_type="image/png"),
             types.AudioContent(data=big, mime_type="audio/wav")]
    result = convert_result(types.CallToolResult(content=items))
    # the budget counts each block's ACP JSON: the first fits, the small one fits after it, the third does not
    assert result.blocks == (ImageBlock(big, "image/png"), ImageBlock(PNG, "image/png"))
    assert result.text.count("[not shown to the user: over the size shown per call]") == 1


def test_the_blocks_are_stored_with_the_tool_message_as_the_acp_blocks() -> None:
    blocks = tuple(block for _, block, *_ in CASES)
    message = ToolResultMessage("c1", "mcp__everything__get-tiny-image", "an image", blocks=blocks)
    body = message_to_json(message)
    assert body["blocks"] == [wire for _, _, wire, _ in CASES]
    assert message_from_json(json.loads(json.dumps(body))) == message
    # a result without blocks is stored as before (no key)
    assert "blocks" not in message_to_json(ToolResultMessage("c2", "read_file", "text"))


def test_the_context_estimate_counts_what_the_model_reads_not_the_shown_blocks() -> None:
    """A big image shown to the user is not in the model's context: it must not push the
    session towards compaction."""
    from tether.agent.tokens import estimate_message

    text = "[image image/png, 1572864 bytes: shown to the user]"
    shown = ToolResultMessage("c1", "mcp__s__shot", text, blocks=(ImageBlock("A" * 2_000_000, "image/png"),))
    assert estimate_message(shown) == estimate_message(ToolResultMessage("c1", "mcp__s__shot", text)) < 100
