"""A live session: its conversation in memory, its store, and the turn that is running.

Owns: the session's messages, its store and `ActiveTurn` (with the messages steered into
it, waiting for its next step boundary).
Must not: run a turn or write to the store (it holds state; loop.py and journal.py act).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from ..tools.changes import KnownFiles
from ..tools.ledger import ContentLedger
from .call_cancel import RunningCalls
from .tokens import ContextEstimate

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from tether_protocol.conversation import ContentBlock, Message

    from ..store import HistoryStore
    from ..tools.sandbox import WorkspaceSandbox


@dataclass(slots=True, eq=False)
class Steer:
    """A message sent into the running turn: it joins the conversation at the next step
    boundary; `landed(step, message_seq)` is called (synchronously) once it is stored."""

    prompt: Sequence[ContentBlock]
    landed: Callable[[int, int], None]


@dataclass(slots=True)
class ActiveTurn:
    """The handle the protocol side uses to cancel a running turn."""

    turn_id: str
    resumed: bool = False  # a turn a dead daemon left waiting: no session/prompt to answer
    cancel_requested: bool = False
    scope: anyio.CancelScope | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    # steered messages waiting for the next step boundary (taken by the loop there)
    steers: list[Steer] = field(default_factory=list)
    # the sub-agents' turns running under this one (agent/subagent.py): a cancel reaches them
    children: list[ActiveTurn] = field(default_factory=list)
    parent_call_id: str = ""  # a sub-agent's turn: the `delegate` call it runs under
    child_session_id: str = ""  # a sub-agent's turn: its own session (`session/cancel` of it on v2)
    # a sub-agent's turn shown nested alone (v1 viewers): shows it as its own session to a
    # v2 window that joins (given its connection; agent/subagent.py)
    show_alone: Callable[[object], None] | None = None
    idempotency_key: str | None = None  # its prompt's (stored with it as the turn begins)
    prompt_digest: str = ""  # with a key: its prompt's digest (a reuse with another prompt is refused)

    def cancel(self) -> None:
        self.cancel_requested = True
        for child in self.children:
            child.cancel()  # first: each commits its transcript as cancelled
        if self.scope is not None:
            self.scope.cancel()


@dataclass(slots=True)
class AgentSession:
    id: str
    workspace: Path
    store: HistoryStore
    sandbox: WorkspaceSandbox
    mode: str
    title: str | None = None
    # the model chosen for this session (session config option "model"); None = the provider's
    model: str | None = None
    # the reasoning effort / thinking chosen (session config option "reasoning"); None = the provider's
    reasoning: str | None = None
    # The model's view of the conversation: typed messages in order. Appended to at
    # step boundaries (never rebuilt per event).
    messages: list[Message] = field(default_factory=list)
    turn: ActiveTurn | None = None
    closed: bool = False
    context: ContextEstimate = field(default_factory=ContextEstimate)
    # The size of the full model view (before pruning), estimated incrementally: what
    # decides pruning and compaction (anchoring it on provider counts of pruned requests
    # would make pruning switch on and off).
    view_size: ContextEstimate = field(default_factory=ContextEstimate)
    # What the model last read of each file (hashes): edits of newer text are refused.
    ledger: ContentLedger | None = None
    # A turn a stopped daemon left waiting for approval was seen here (session/resume,
    # or a prompt refused for it): only then does session/cancel look for it in the store.
    left_waiting: bool = False
    # The user was told that this session's commands run without an OS sandbox (once).
    told_unsandboxed: bool = False
    # Hosts the user allowed "for this session" when the network proxy asked (netproxy/).
    allowed_domains: set[str] = field(default_factory=set)
    # The slash commands last sent to the client (server/commands.py): sent again only when changed.
    commands_sent: list[tuple[str, str, str | None]] | None = None
    # Files whose current content the history stores (checkpoints): a command's scan needs no copy of them.
    known_files: KnownFiles = field(default_factory=KnownFiles)
    # the session's hooks were started (`session_start`) and their notices shown in this daemon
    hooks_told: bool = False
    # Its running tool calls that the user may stop one by one (`tool_call/cancel`).
    calls: RunningCalls = field(default_factory=RunningCalls)

    def __post_init__(self) -> None:
        if self.ledger is None:
            self.ledger = ContentLedger(self.sandbox)
