"""MCP resources attached to a prompt as ACP `resource_link` blocks.

Owns: reading a `resource_link` a session's MCP server serves (`resources/read`) and adding its
text after the link as an embedded resource; `file:` links and unserved ones stay links,
a failed read is a notice.
Must not: import the MCP SDK at import time, or read anything for a session without servers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether_protocol.conversation import ContentBlock, EmbeddedResource, ResourceContents, ResourceLink

from .mcp_servers import manager, session_servers

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..rendering import SessionUpdates
    from .ports import SettingsHost


async def attach_resources(
    ctx: SettingsHost, session_id: str, blocks: Sequence[ContentBlock], sink: SessionUpdates
) -> tuple[ContentBlock, ...]:
    links = [b for b in blocks if isinstance(b, ResourceLink) and not b.uri.startswith("file:")]
    servers = session_servers(ctx, session_id) if links else ()
    if not servers:
        return tuple(blocks)
    connections = [c for c in await manager(ctx).start(servers) if c.ready]
    out: list[ContentBlock] = []
    for block in blocks:
        out.append(block)
        if not (isinstance(block, ResourceLink) and block in links):
            continue
        for connection in connections:
            try:
                contents = await connection.read_resource(block.uri)
            except Exception as exc:
                sink.notice(f"\n[MCP server {connection.config.name} could not read {block.uri}: {exc}]\n")
                continue
            if contents:
                out += [
                    EmbeddedResource(ResourceContents(uri, text=text, mime_type=mime)) for uri, text, mime in contents
                ]
                break
    return tuple(out)
