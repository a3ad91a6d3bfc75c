"""The user's hooks and ask-first as the turn's hook port (`agent/hook_port.py`).

Owns: `UserHooks`, which answers the turn's calls with the points (`points.py`,
`turn_points.py`) over the turn's `Hooks` (None when only ask-first is on) and ask-first's
question (`ask_first.py`, imported when first asked). Must not: decide anything itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .points import after_tool, before_tool
from .turn_points import observe, prompt_hooks

if TYPE_CHECKING:
    from tether_protocol.conversation import ContentBlock

    from ..agent.hook_port import PreTool, PromptHooks
    from ..agent.session import AgentSession
    from ..agent.state import PendingCall
    from ..tools.base import Tool, ToolResult
    from .engine import Hooks

__all__ = ["UserHooks"]


class UserHooks:
    __slots__ = ("hooks",)

    def __init__(self, hooks: Hooks | None) -> None:
        self.hooks = hooks

    async def prompt_submitted(self, session: AgentSession, blocks: list[ContentBlock]) -> PromptHooks:
        return await prompt_hooks(self.hooks, session, blocks)

    async def before_tool(self, call: PendingCall, tool: Tool[Any], args: object) -> PreTool:
        return await before_tool(self.hooks, call, tool, args)

    async def after_tool(self, call: PendingCall, tool: Tool[Any], result: ToolResult) -> ToolResult:
        return await after_tool(self.hooks, call, tool, result)

    async def observe(self, stage: str, **fields: Any) -> bool:
        return await observe(self.hooks, stage, **fields)

    def first_question(self, prompt: str) -> str | None:
        from .ask_first import clarifying_question  # its patterns are compiled when first asked

        return clarifying_question(prompt)
