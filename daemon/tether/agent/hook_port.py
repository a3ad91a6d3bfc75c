"""The turn's hook port: the calls the turn makes at its points, given to it like the asker.

Owns: `HookPort` (before and after a tool, the prompt's hooks, a stage that only reports,
ask-first's question), what a hook's answer looks like to the turn (`PreTool`,
`PromptHooks`), `NO_HOOKS` (a turn given none) and asking the user before a read a hook
asked about. Must not: import `tether.hooks` (it implements this port: `hooks/port.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tether_protocol.conversation import ContentBlock

    from ..approvals import ApprovalRequest, Asker
    from ..tools.base import Tool, ToolResult
    from .session import AgentSession
    from .state import PendingCall

__all__ = ["NO_HOOKS", "HookPort", "NoHooks", "PreTool", "PromptHooks", "ask_for_read"]


@dataclass(slots=True)
class PreTool:
    decision: str | None = None  # allow | deny | ask (a modify is applied here)
    reason: str = ""
    args: Any = None  # the validated arguments (changed by a modify)


@dataclass(slots=True)
class PromptHooks:
    blocks: list[ContentBlock]
    refusal: str = ""  # a `prompt_submit` hook denied the prompt: why


class HookPort(Protocol):
    async def prompt_submitted(self, session: AgentSession, blocks: list[ContentBlock]) -> PromptHooks:
        """`session_start` (once per session and daemon) and `prompt_submit`: the blocks the
        model reads (with the hooks' context), or why the prompt is refused."""
        ...

    async def before_tool(self, call: PendingCall, tool: Tool[Any], args: object) -> PreTool:
        """`pre_tool`: the decision for the gate, and the arguments (a modify validated)."""
        ...

    async def after_tool(self, call: PendingCall, tool: Tool[Any], result: ToolResult) -> ToolResult:
        """`post_tool`: the result the model reads (a hook's context or reason added)."""
        ...

    async def observe(self, stage: str, **fields: Any) -> bool:
        """A stage that only reports (`step_end`, `turn_end`, `pre_compact`): whether a hook ran."""
        ...

    def first_question(self, prompt: str) -> str | None:
        """Ask-first: the question to ask before acting on `prompt`, or None."""
        ...


class NoHooks:
    """The port of a turn with no hooks and no ask-first: every point passes through."""

    __slots__ = ()

    async def prompt_submitted(self, session: AgentSession, blocks: list[ContentBlock]) -> PromptHooks:
        return PromptHooks(blocks)

    async def before_tool(self, call: PendingCall, tool: Tool[Any], args: object) -> PreTool:
        return PreTool(args=args)

    async def after_tool(self, call: PendingCall, tool: Tool[Any], result: ToolResult) -> ToolResult:
        return result

    async def observe(self, stage: str, **fields: Any) -> bool:
        return False

    def first_question(self, prompt: str) -> str | None:
        return None


NO_HOOKS = NoHooks()


async def ask_for_read(asker: Asker | None, request: ApprovalRequest, reason: str) -> str | None:
    """A hook asked before a read-only tool runs: None when the user allows it, else why not."""
    if asker is None:
        return f"not run: {reason}, and there is no way to ask the user"
    answer = await asker.ask(request, reason)
    if answer.option.startswith("allow"):
        return None
    return f"not run: {reason}; the user did not allow it"
