"""The size cap on what the user sends: a prompt, a steered message, an answer (SPEC §3.8).

Owns: measuring a message (UTF-8 bytes of its blocks' text, URIs, names, MIME types, `_meta`, and
`BLOCK_BYTES` a block) and refusing one over the user's `max_message_mib` with `-32602` naming the
method, the field, the size and the limit, before anything is stored, shown or sent to the model.
Must not: truncate a message (it is taken whole or refused), store anything, or read a workspace's config.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from tether_protocol import (
    DEFAULT_MAX_MESSAGE,
    ContentBlock,
    EmbeddedResource,
    InvalidParams,
    ResourceLink,
    TextContent,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

MIB = 1024 * 1024
# A prompt's text at the limit, JSON-escaped: a control character is 6 bytes as `\u0001` (SPEC §1.2).
_ESCAPED = 6


def frame_limit(limit_mib: int) -> int:
    """The most bytes one JSON-RPC message may hold on the wire, from the user's `max_message_mib`:
    room for a prompt at that limit escaped at worst, plus its envelope; never under the default."""
    return max(DEFAULT_MAX_MESSAGE, (_ESCAPED * limit_mib + 1) * MIB)


def text_bytes(text: str) -> int:
    """``text``'s UTF-8 size (ASCII text is counted without encoding it)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


# What a block costs beyond its fields' text (its JSON's keys and type): a flood of empty
# blocks is stored and queued too, so it counts.
BLOCK_BYTES = 32


def _block_fields(block: ContentBlock) -> list[tuple[str, str]]:
    if isinstance(block, TextContent):
        fields = [("text", block.text)]
    elif isinstance(block, ResourceLink):
        fields = [("uri", block.uri), ("name", block.name), ("mimeType", block.mime_type or "")]
    elif isinstance(block, EmbeddedResource):
        resource = block.resource
        fields = [
            ("resource.text", resource.text),
            ("resource.uri", resource.uri),
            ("resource.mimeType", resource.mime_type or ""),
        ]
    else:
        fields = []
    if block.meta:  # a client's `_meta` is stored with the block (rare: encoded only when there)
        fields.append(("_meta", msgspec.json.encode(block.meta).decode("utf-8", "surrogatepass")))
    return fields


def _fields_of(block: ContentBlock, method: str, where: str) -> list[tuple[str, str]]:
    try:
        return _block_fields(block)
    except RecursionError:  # a `_meta` nested past the stack could be neither stored nor sent
        raise InvalidParams(
            f"invalid params for {method}: {where}._meta is nested too deeply; send a flatter _meta"
        ) from None


def refuse_oversized(blocks: Sequence[ContentBlock], limit_mib: int, method: str, field: str = "prompt") -> None:
    """InvalidParams when the blocks are over ``limit_mib`` MiB in all."""
    limit = limit_mib * MIB
    total, largest, largest_size = len(blocks) * BLOCK_BYTES, "", -1
    for i, block in enumerate(blocks):
        for name, text in _fields_of(block, method, f"{field}[{i}]"):
            size = text_bytes(text)
            total += size
            if size > largest_size:
                largest, largest_size = f"{field}[{i}].{name}", size
    if total > limit:
        if len(blocks) * BLOCK_BYTES > largest_size:
            largest, largest_size = f"its {len(blocks)} blocks at {BLOCK_BYTES} bytes each", len(blocks) * BLOCK_BYTES
        _refuse(method, field, total, f"{largest}, {largest_size / MIB:.1f} MiB", limit_mib)


def refuse_long_text(text: str, limit_mib: int, method: str, field: str) -> None:
    """InvalidParams when one text (an LSP command's prompt) is over ``limit_mib`` MiB."""
    size = text_bytes(text)
    if size > limit_mib * MIB:
        _refuse(method, field, size, f"{field}, {size / MIB:.1f} MiB", limit_mib)


def _refuse(method: str, field: str, size: int, largest: str, limit_mib: int) -> None:
    raise InvalidParams(
        f"invalid params for {method}: {field} holds {size / MIB:.1f} MiB of text (the largest part, "
        f"{largest}), over the limit of {limit_mib} MiB per message; nothing was stored. Send less (a file "
        f"by its path or a resource_link), or raise max_message_mib in your user config (a workspace config cannot)"
    )


def answer_over_limit(answer: str, limit_mib: int) -> str | None:
    """Why an answer to a question is refused (too large), or None."""
    size = text_bytes(answer)
    if size <= limit_mib * MIB:
        return None
    return (
        f"your answer was {size / MIB:.1f} MiB, over the limit of {limit_mib} MiB per message; it was not "
        f"sent to the model (raise max_message_mib in your user config to allow larger ones)"
    )
