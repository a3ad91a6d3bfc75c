"""MCP prompts as slash commands: `/<server>:<prompt> [arguments]`.

Owns: the commands a session's started servers offer (kept on the live session, listed from
the next prompt on), reading the arguments typed after the name, and the prompt a command
expands to (`prompts/get`; the argument rules are in docs/decisions/0018).
Must not: import the MCP SDK at import time (it is on the start path), or run the turn.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tether_protocol import ContentBlock

    from ..mcp.connection import McpConnection
    from ..rendering import SessionUpdates
    from .commands import Command, Expanded
    from .live_session import CommandEntry, LiveSession
    from .ports import SettingsHost


def record(session: LiveSession | None, connections: Sequence[McpConnection]) -> None:
    """The prompts of a session's ready servers become its commands (None: the session
    closed, or is a sub-agent's: nobody's menu shows them)."""
    if session is None:
        return
    found: list[CommandEntry] = []
    for connection in connections:
        for prompt in connection.prompts:
            names = [a.name for a in prompt.arguments or ()]
            about = prompt.description or prompt.title or prompt.name
            found.append(
                (
                    f"{connection.config.name}:{prompt.name}",
                    f"[MCP {connection.config.name}] {about}",
                    " ".join(names) or None,
                )
            )
    session.prompt_commands = found


def arguments(names: Sequence[str], text: str) -> dict[str, str]:
    """What the user typed after the command, as the prompt's named arguments."""
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    given: dict[str, str] = {}
    loose: list[str] = []
    for word in words:
        key, eq, value = word.partition("=")
        if eq and key in names:
            given[key] = value
        else:
            loose.append(word)
    free = [n for n in names if n not in given]
    for i, name in enumerate(free):
        if i >= len(loose):
            break
        given[name] = " ".join(loose[i:]) if i == len(free) - 1 else loose[i]
    return given


async def expand(
    ctx: SettingsHost, session_id: str, command: Command, rest: Sequence[ContentBlock], sink: SessionUpdates
) -> Expanded | None:
    """The prompt `/<server>:<prompt>` expands to; None (with a notice) when there is none."""
    from .commands import Expanded
    from .mcp_servers import manager, session_servers

    server, _colon, name = command.name.partition(":")
    configs = [c for c in session_servers(ctx, session_id) if c.name == server]
    connections = await manager(ctx).start(configs)
    connection = next((c for c in connections if c.ready), None)
    prompt = next((p for p in connection.prompts if p.name == name), None) if connection else None
    if connection is None or prompt is None:
        sink.notice(f"\n[/{command.name}: MCP server {server} has no prompt {name!r} now]\n")
        return None
    try:
        result = await connection.get_prompt(name, arguments([a.name for a in prompt.arguments or ()], command.args))
    except Exception as exc:
        sink.notice(f"\n[/{command.name}: MCP server {server} did not give the prompt: {exc}]\n")
        return None
    texts = [_text(m.content) for m in result.messages]
    from tether_protocol import TextContent  # the prompt path's: not when `session/new` loads this module

    return Expanded([TextContent("\n\n".join(t for t in texts if t)), *rest])


def _text(content: Any) -> str:
    text = getattr(content, "text", None)
    if isinstance(text, str):
        return text
    resource = getattr(content, "resource", None)
    return str(getattr(resource, "text", "") or "")
