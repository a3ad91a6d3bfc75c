"""A prompt's content blocks (ACP v1's wire Structs) as the conversation's, in one step.

Owns: `conversation_blocks`: each wire block's fields put straight into the conversation's block
(its `_meta` kept in ``extra``, as the stored JSON keeps it), with no JSON in between.
Must not: validate (the params' decode did, with its error words) or know a provider's shape.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._conversation_blocks import ContentBlock, EmbeddedResource, ResourceContents, ResourceLink, TextBlock
from ._json import JsonObject
from .acp_v1 import content as wire


def _extra(meta: JsonObject | None) -> JsonObject:
    return {} if meta is None else {"_meta": meta}


def _conversation_block(block: wire.ContentBlock) -> ContentBlock:
    """One wire block as the conversation's (the stored shape keeps what ACP adds: `_meta`)."""
    if type(block) is wire.TextContent:
        return TextBlock(block.text, None if block.meta is None else {"_meta": block.meta})
    if type(block) is wire.ResourceLink:
        return ResourceLink(block.uri, block.name, block.mime_type, _extra(block.meta))
    if type(block) is wire.EmbeddedResource:
        res = block.resource
        return EmbeddedResource(ResourceContents(res.uri, res.text, None, res.mime_type, {}), _extra(block.meta))
    raise TypeError(f"not one of ACP v1's prompt content blocks: {type(block).__name__}")


def conversation_blocks(blocks: Iterable[wire.ContentBlock]) -> tuple[ContentBlock, ...]:
    """A prompt's wire blocks as the conversation's, in order."""
    return tuple(map(_conversation_block, blocks))
