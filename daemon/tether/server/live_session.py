"""A live session as the protocol side holds it: the agent's session and what lives and dies with it.

Owns: `LiveSession` — an `AgentSession` (conversation, store, turn) with the state that is
the session's own: its prompt queue (made by `queue.queue_of` on first use), the slash
commands its MCP servers' prompts offer, and the approvals the shared daemon has open on
it. Closing the session (`SessionRegistry.end_live`) drops all of it with the object.
Must not: import the turn's modules or speak the protocol (it is data).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..agent.session import AgentSession

if TYPE_CHECKING:
    from ..shared.approvals import Ask
    from .queue import PromptQueue

# a slash command: its name, its description, the hint for its arguments
CommandEntry = tuple[str, str, str | None]


@dataclass(slots=True)
class LiveSession(AgentSession):
    # the prompts waiting for (or steered into) the running turn; None until one is sent
    queue: PromptQueue | None = None
    # the prompts of the session's ready MCP servers, as commands (server/mcp_prompts.py)
    prompt_commands: list[CommandEntry] = field(default_factory=list)
    # the shared daemon's approvals asked for this session's turn and not answered yet
    # (a window that joins is asked too: shared/approvals.py)
    open_asks: list[Ask] = field(default_factory=list)
