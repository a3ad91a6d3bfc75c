"""A live session as the protocol side holds it: the agent's session and what lives and dies with it.

Owns: `LiveSession` — an `AgentSession` (conversation, store, turn) with its prompt queue, its
client's MCP servers and their commands, its audience, its open approvals, its running v2 turn's
sink (and its sub-agents'), the last rewind it reflects, its turns' setup — and `Audiences`, the emitter's view of who sees each. Must not: import the turn's
modules or speak the protocol (it is data; `SessionRegistry.end_live` drops it whole)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..agent.session import AgentSession

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..agent.sink import TurnSink
    from ..config.mcp_servers import McpServerConfig
    from ..transport.connection import Connection
    from .ports import OpenApproval
    from .queue import PromptQueue
    from .turn_setup import TurnSetup

# a slash command: its name, its description, the hint for its arguments
CommandEntry = tuple[str, str, str | None]


@dataclass(slots=True)
class LiveSession(AgentSession):
    # the prompts waiting for (or steered into) the running turn; None until one is sent
    queue: PromptQueue | None = None
    # the MCP servers the session's client gave it (`mcpServers`; server/mcp_servers.py)
    mcp_servers: tuple[McpServerConfig, ...] = ()
    # the MCP servers' failures its turns have already told (once per session)
    mcp_told: set[str] = field(default_factory=set)
    # the prompts of the session's ready MCP servers, as commands (server/mcp_prompts.py)
    prompt_commands: list[CommandEntry] = field(default_factory=list)
    # the connections that see its updates (joined by `session/new`, `load`, `resume`:
    # server/audience.py); a window that leaves takes its entry with it
    audience: list[Connection] = field(default_factory=list)
    # the last rewind its conversation reflects (None: not checked since it was made live;
    # a rewind from a shell since then is read in before its next turn: sessions_service.py)
    rewind_seen: int | None = None
    # the row id of its newest stored message as its last turn here left it (None: unknown, e.g.
    # since it was made live): another at its next prompt is another process's writing (a turn, a
    # delete and restore), read in before that turn (sessions_service.py)
    written_seen: int | None = None
    # SQLite's `data_version` of its store when it was last checked for such a rewind (None:
    # never): unchanged, no other connection wrote since, so none can have been made
    history_version: int | None = None
    # made live while its id was a sub-agent's running turn: what that turn added after is
    # read in before its next turn (sessions_service.py)
    read_while_child_ran: bool = False
    # the shared daemon's approvals asked for this session's turn and not answered yet
    # (a window that joins is asked too: shared/approvals.py)
    open_asks: list[OpenApproval] = field(default_factory=list)
    # ACP v2: the sink of its running turn (and of that turn's running sub-agents, by their own
    # ids), told `requires_action` while an approval or a form waits (handlers/prompt_v2.py and
    # services/turns.py keep the turn's, services/child_sessions.py a sub-agent's)
    turn_sinks: dict[str, TurnSink] = field(default_factory=dict)
    # what its turns are given that a prompt does not change (hidden paths, hooks as configured):
    # built by its first turn, again when an input changed (services/turn_setup.py)
    turn_setup: TurnSetup | None = None
    # what `commands_sent` was made from: the setup's command files and `prompt_commands`
    # (by identity: the prompt handler sends the list again when either is new)
    commands_read: tuple[object, ...] | None = None


class Audiences:
    """The connections that see each live session (none for a session not live): what the
    update emitter reads as a shared daemon's connection's `audience`."""

    __slots__ = ("_live",)

    def __init__(self, live: Mapping[str, LiveSession]) -> None:
        self._live = live

    def get(self, session_id: str, default: Sequence[Connection] = ()) -> Sequence[Connection]:
        session = self._live.get(session_id)
        return session.audience if session is not None else default
