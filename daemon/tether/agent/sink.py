"""What a turn reports while it runs, as typed events; the server renders them.

Owns: the events a turn emits and `TurnSink`: text and thought deltas as plain calls,
the rest through `emit`; tool-call events as patches keyed by call id (docs/decisions/0011-agent.md).
Must not: know JSON-RPC or ACP field names, or build protocol JSON; every wire version
is a renderer in `tether.rendering`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping

    from tether_protocol.conversation import ContentBlock

    from ..tools.base import ChangePreview, ToolLocation

ToolStatus = Literal["pending", "in_progress", "completed", "failed"]


@dataclass(frozen=True, slots=True)
class TextContent:
    """Text shown in a tool call (its result, its live output, why it did not run)."""

    text: str


@dataclass(frozen=True, slots=True)
class ChangeContent:
    """A file change a call would make or made (a diff when there is text to diff)."""

    change: ChangePreview


@dataclass(frozen=True, slots=True)
class TerminalContent:
    """A terminal the client shows the command's output in (its output comes as
    `TerminalOutput` events)."""

    terminal_id: str


@dataclass(frozen=True, slots=True)
class BlockContent:
    """A content block shown in a tool call (an MCP tool's image, audio, resource or link)."""

    block: ContentBlock


ToolContent = TextContent | ChangeContent | TerminalContent | BlockContent


@dataclass(frozen=True, slots=True)
class TerminalInfo:
    terminal_id: str
    cwd: str  # absolute


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """The model began a call (its arguments are still streaming)."""

    call_id: str
    title: str
    kind: str
    status: ToolStatus = "pending"
    parent_call_id: str | None = None  # a sub-agent's call: the `delegate` call it runs under


@dataclass(frozen=True, slots=True)
class ToolCallPatch:
    """A change to a call the client was shown: `None` fields are unchanged; `content`
    replaces the call's content."""

    call_id: str
    status: ToolStatus | None = None
    title: str | None = None
    kind: str | None = None
    raw_input: Mapping[str, Any] | None = None  # the model's arguments (JSON)
    content: tuple[ToolContent, ...] | None = None
    locations: tuple[ToolLocation, ...] | None = None
    approved_by: str | None = None  # why it may run (the approval's reason)
    terminal: TerminalInfo | None = None  # the command runs in this terminal
    parent_call_id: str | None = None  # a sub-agent's call: the `delegate` call it runs under
    child_session_id: str | None = None  # a `delegate` call: the sub-agent's stored session
    # the running call may be stopped alone (agent/call_cancel.py); False: no longer; None: unchanged
    cancellable: bool | None = None
    cancelled: bool = False  # it was stopped so: v2 shows `cancelled`, v1 `failed`


@dataclass(frozen=True, slots=True)
class TerminalOutput:
    """More output of a command shown in a terminal (appended by the client)."""

    call_id: str
    terminal_id: str
    data: str


@dataclass(frozen=True, slots=True)
class TerminalStarted:
    """A command's terminal starts (before the call's patch that shows it): ACP v2 says
    `terminal_update` with the command, its directory and whether it may be stopped alone;
    ACP v1 has nothing to show for it (the patch carries `_meta.terminal_info`)."""

    terminal_id: str
    command: str
    cwd: str  # absolute
    cancellable: bool = False


@dataclass(frozen=True, slots=True)
class TerminalExited:
    call_id: str
    terminal_id: str
    exit_code: int | None  # None: it was killed (timeout or signal)
    signal: str | None = None


@dataclass(frozen=True, slots=True)
class PlanEntry:
    content: str
    priority: str
    status: str


@dataclass(frozen=True, slots=True)
class PlanUpdated:
    """The model's plan, whole (it replaces the previous one)."""

    entries: tuple[PlanEntry, ...]


@dataclass(frozen=True, slots=True)
class UsageUpdated:
    used: int  # tokens in the context
    size: int  # the model's context window


@dataclass(frozen=True, slots=True)
class TitleChanged:
    title: str


@dataclass(frozen=True, slots=True)
class Notice:
    """Something about the turn itself, not the model's words (shown as text)."""

    text: str


@dataclass(frozen=True, slots=True)
class RecalledMessage:
    """A message of an earlier session that retrieved memory gave the model."""

    session_id: str
    session_title: str | None
    seq: int
    role: str
    snippet: str


@dataclass(frozen=True, slots=True)
class MemoryRecalled:
    """Retrieved memory (agent/memory.py) gave the model these messages this turn."""

    messages: tuple[RecalledMessage, ...]
    tokens: int  # estimated tokens the block added


@dataclass(frozen=True, slots=True)
class ContextCompacted:
    """Earlier messages were summarised to fit the context window."""

    replaced: int
    reason: str


@dataclass(frozen=True, slots=True)
class StepStarted:
    """A model step starts streaming (a new assistant message; a retried step is a new
    one). ACP v1 has nothing to show for it."""

    turn_id: str
    index: int


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """A turn with no `session/prompt` to answer (one resumed after a restart, or dropped
    while it waited) ended. ACP v2 reports every turn's end this way (`state_update`)."""

    turn_id: str
    stop_reason: str


@dataclass(frozen=True, slots=True)
class PromptInserted:
    """The user's prompt became the turn's first message (ACP v2 answers `session/prompt`
    here, with the message's id); ACP v1 has nothing to show for it."""

    turn_id: str
    content: tuple[ContentBlock, ...]


@dataclass(frozen=True, slots=True)
class PromptSteered:
    """A message steered into the running turn landed after step `after_step`, stored as
    message `seq` of the session: ACP v2 shows it as `user_message` `<turnId>.s<seq>`; v1
    as its marked `user_message_chunk`s (server/queue.py sends those)."""

    turn_id: str
    after_step: int
    seq: int
    content: tuple[ContentBlock, ...]


TurnState = Literal["running", "requires_action", "idle"]


@dataclass(frozen=True, slots=True)
class TurnStateChanged:
    """The turn runs, waits for the user (an approval), or has ended (`stop_reason`: ACP's
    stop reason, or "error"). ACP v2 shows each as `state_update`; v1 answers the prompt."""

    state: TurnState
    stop_reason: str | None = None
    error: Mapping[str, Any] | None = None  # "error": the failure as a JSON-RPC error object


@dataclass(frozen=True, slots=True)
class SubagentChanged:
    """A `delegate` call's child session, on its parent's sink: announced (title, task,
    cancellable) before anything of it is shown, then each state it reports. ACP v2 shows
    it as `subagent_update`; v1 nests the child under the call instead (nothing for this)."""

    session_id: str  # the child's
    parent_call_id: str
    title: str | None = None
    description: str | None = None
    cancellable: bool | None = None
    state: TurnStateChanged | None = None


TurnEvent = (
    ToolCallStarted
    | ToolCallPatch
    | TerminalStarted
    | TerminalOutput
    | TerminalExited
    | PlanUpdated
    | UsageUpdated
    | TitleChanged
    | Notice
    | ContextCompacted
    | StepStarted
    | TurnEnded
    | MemoryRecalled
    | PromptInserted
    | PromptSteered
    | TurnStateChanged
    | SubagentChanged
)


class TurnSink(Protocol):
    def text(self, delta: str) -> None: ...

    def thought(self, delta: str) -> None: ...

    def emit(self, event: TurnEvent) -> None:
        """Report an event; events are shown in the order emitted, after any deltas."""
        ...

    def flush(self) -> None: ...


def failed(call_id: str, text: str) -> ToolCallPatch:
    """A call that ends failed, saying why."""
    return ToolCallPatch(call_id, status="failed", content=(TextContent(text),))


def plan_of(entries: list[dict[str, str]]) -> PlanUpdated:
    return PlanUpdated(tuple(PlanEntry(e["content"], e["priority"], e["status"]) for e in entries))
