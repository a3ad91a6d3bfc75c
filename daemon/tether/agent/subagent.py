"""Sub-agents: the `delegate` tool's child turns (how a child is built: docs/decisions/0011-agent.md).

Owns: `SubAgents` (the turn's `Delegator`), the child session stored in the parent's
workspace store, and the result the parent model sees. Must not: run tools or stream the
model itself (the child's `AgentTurn` does), or build protocol JSON.
"""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import anyio

from tether_protocol.conversation import AssistantMessage, Message, TextBlock

from ..tools.base import ToolResult
from ..tools.delegate import DelegateArgs, DelegateTool
from ..tools.registry import ToolRegistry
from .loop import AgentTurn, TurnOutcome
from .session import ActiveTurn, AgentSession
from .sink import PromptInserted, SubagentChanged, TurnEvent, TurnSink, TurnStateChanged
from .subagent_parts import BudgetedProvider, ChildAsker, ChildSink

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ..providers.base import Provider
    from .turn_services import TurnServices

__all__ = ["ChildViews", "DelegateLimits", "SubAgents", "with_delegate"]


class ChildViews(Protocol):
    """A child session's own sink, where it is shown as a session of its own (ACP v2 viewers),
    or None: nobody sees it so (v1 sees it nested under the call). `joining`: the connection of
    a window that joins while the child runs, `past` the events its ids need (the child's
    prompt and current step)."""

    def __call__(
        self, child_id: str, call_id: str, joining: object = None, past: Sequence[TurnEvent] = ()
    ) -> TurnSink | None: ...


TITLE_CHARS = 60


@dataclass(frozen=True, slots=True)
class DelegateLimits:
    """The user's settings for sub-agents (`delegate_*`) and the turn settings they share."""

    max_steps: int = 10
    tokens: int = 200_000
    keep_user_turns: int = 50
    max_output_tokens: int = 0
    guard_mode: str = "warn"


def _shown_later(sink: ChildSink, views: ChildViews, prompt: PromptInserted) -> Callable[[object], None]:
    """How a child that started with v1 viewers alone is shown as a session of its own to a
    v2 window joining (its connection), under the ids its turn has (SPEC §12.6)."""

    def show(joining: object) -> None:
        if sink.own is None:
            past: list[TurnEvent] = [prompt] if sink.step is None else [prompt, sink.step]
            sink.own = views(sink.child_id, sink.call_id, joining, past)

    return show


class SubAgents:
    """The `Delegator` of one running turn: each `delegate` call runs a child turn."""

    def __init__(
        self,
        session: AgentSession,
        handle: ActiveTurn,
        *,
        provider: Provider,
        tools: ToolRegistry,
        sink: TurnSink,
        services: TurnServices,
        limits: DelegateLimits,
        child_views: ChildViews | None = None,
    ) -> None:
        self.session, self.handle = session, handle
        self.provider, self.tools, self.sink = provider, tools, sink
        self.services, self.limits, self.child_views = services, limits, child_views

    async def delegate(self, args: DelegateArgs, call_id: str) -> ToolResult:
        child = await self._child_session(args, call_id)
        handle = ActiveTurn("turn_" + uuid.uuid4().hex, parent_call_id=call_id, child_session_id=child.id)
        provider = BudgetedProvider(self.provider, self.limits.tokens)
        # announced on the parent before anything of the child is shown
        self.sink.emit(SubagentChanged(child.id, call_id, title=child.title, description=args.task, cancellable=True))
        own = self.child_views(child.id, call_id) if self.child_views is not None else None
        sink = ChildSink(self.sink, call_id, child.id, own)
        sink.show()
        prompt = PromptInserted(handle.turn_id, (TextBlock(args.task),))
        if own is not None:
            own.emit(prompt)
            own.emit(TurnStateChanged("running"))
        elif self.child_views is not None:  # v1 viewers alone: shown alone to a v2 window that joins
            handle.show_alone = _shown_later(sink, self.child_views, prompt)
        steps = min(args.max_steps, self.limits.max_steps)
        turn = AgentTurn(
            child,
            handle,
            provider=provider,
            tools=self._child_tools(args.writes),
            sink=sink,
            max_steps=steps,
            max_output_tokens=self.limits.max_output_tokens,
            keep_user_turns=self.limits.keep_user_turns,
            guard_mode=self.limits.guard_mode,
            services=self._child_services(call_id),
        )
        self.handle.children.append(handle)
        if self.handle.cancel_requested:
            handle.cancel()
        stop, failure = "error", None
        try:
            outcome = await turn.run([TextBlock(args.task)])
            stop, failure = outcome.stop_reason, outcome.failure()
        except anyio.get_cancelled_exc_class():
            stop = "cancelled"  # the parent's turn was cancelled around the child's (it was not an error)
            raise
        finally:
            self.handle.children.remove(handle)
            handle.show_alone = None
            if (own := sink.own) is not None:  # a failed child says why, as a failed turn of its own would (§12.2)
                own.emit(TurnStateChanged("idle", stop, error=failure.to_error() if failure is not None else None))
                own.flush()
        return child_result(outcome, child, provider, steps)

    async def _child_session(self, args: DelegateArgs, call_id: str) -> AgentSession:
        parent = self.session
        child_id = "sess_" + uuid.uuid4().hex
        first = " ".join(args.task.split())
        title = "↳ " + (first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 1] + "…")
        link = {"parentSessionId": parent.id, "parentCallId": call_id}
        child = ChildSession(parent, args.writes, child_id, title=title)
        await parent.store.create_session(child_id, str(parent.workspace), child.mode, title=title, metadata=link)
        return child

    def _child_tools(self, writes: bool) -> ToolRegistry:
        """The parent's read-only tools, or (`writes`) all of them; never `delegate`."""
        return ToolRegistry([t for t in self.tools if t.name != DelegateTool.name and (writes or t.read_only)])

    def _child_services(self, call_id: str) -> TurnServices:
        """The parent's gate, hooks and files; asked under the `delegate` call; no retrieved
        memory or ask-first (the task is the parent model's, not the user's words)."""
        asker = ChildAsker(self.services.asker, self.session.id, call_id)
        return dataclasses.replace(
            self.services,
            asker=asker,
            memory_tokens=0,
            ask_first=False,
            terminal_output_meta=False,
            instructions=None,  # read when the child starts, as a turn of its own would
        )


class ChildSession(AgentSession):
    """A sub-agent's session: its mode is its parent's as it is now (read-only without
    `writes`), read at every call, so a user who switches the parent to ask while the
    child runs is asked for the child's next change."""

    __slots__ = ("parent", "writes")

    def __init__(self, parent: AgentSession, writes: bool, child_id: str, *, title: str) -> None:
        self.parent, self.writes = parent, writes
        super().__init__(
            child_id,
            parent.workspace,
            parent.store,
            parent.sandbox,
            self.mode,
            title=title,
            model=parent.model,
            reasoning=parent.reasoning,
        )
        self.calls = parent.calls  # its calls show under the parent's session: stopped from there

    @property
    def mode(self) -> str:
        return self.parent.mode if self.writes else "read-only"

    @mode.setter
    def mode(self, value: str) -> None:
        # set only by AgentSession.__init__ (with the value above): the mode is the parent's
        if value != self.mode:
            raise AttributeError("a sub-agent's mode is its parent's: set the parent session's mode")


def with_delegate(tools: ToolRegistry, max_steps: int) -> ToolRegistry:
    """The tools with `delegate` (the base registry is shared by every session); a call runs
    on the `SubAgents` its turn gives it (`ToolContext.sub_agents`)."""
    return ToolRegistry([*tools, DelegateTool(max_steps=max_steps)])


def child_result(outcome: TurnOutcome, child: AgentSession, provider: BudgetedProvider, cap: int) -> ToolResult:
    """What the parent model gets back: the child's final answer, or why it stopped."""
    answer, steps = _last_answer(child.messages)
    facts = f"[sub-agent session {child.id}: {steps} step{'s' if steps != 1 else ''}, {provider.used} tokens]"
    said = answer or "(it said nothing)"
    stop = outcome.stop_reason
    if provider.spent:
        text = (
            f"budget spent: the sub-agent used {provider.used} of its {provider.budget} tokens and was "
            f"stopped before it finished. What it said last:\n{said}"
        )
        return ToolResult(f"{text}\n{facts}", is_error=True)
    if stop == "max_turn_requests":
        text = f"step cap reached: the sub-agent took its {cap} steps without finishing. What it said last:\n{said}"
        return ToolResult(f"{text}\n{facts}", is_error=True)
    if stop == "cancelled":
        return ToolResult(f"cancelled: the sub-agent was stopped. What it said last:\n{said}\n{facts}", is_error=True)
    if stop == "error":
        return ToolResult(f"the sub-agent failed: {outcome.error}\n{facts}", is_error=True)
    if stop == "refusal":
        return ToolResult(f"the sub-agent refused the task: {said}\n{facts}", is_error=True)
    return ToolResult(f"{said}\n{facts}")


def _last_answer(messages: Sequence[Message]) -> tuple[str, int]:
    """The child's last words and how many model steps it took."""
    replies = [m for m in messages if isinstance(m, AssistantMessage)]
    for reply in reversed(replies):
        if reply.text.strip():
            return reply.text.strip(), len(replies)
    return "", len(replies)
