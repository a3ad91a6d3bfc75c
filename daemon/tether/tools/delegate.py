"""The `delegate` tool: the model hands a self-contained task to a sub-agent (SPEC §5.23).

Owns: the arguments, the title, whether the call only reads (without `writes`: approved as a read) and
handing the call to the `Delegator` its context carries (the running turn's: the tool
itself is the session's, built once).
Must not: run a model or a turn itself (the delegator does), or know the agent loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Annotated, Any, ClassVar, Protocol

from msgspec import Meta

from tether.tools.args import ToolArgs, with_argument
from tether.tools.base import Tool, ToolContext, ToolResult

__all__ = ["DelegateArgs", "DelegateTool", "Delegator"]

MAX_TASK_CHARS = 20_000


_TASK = (
    "The whole task, self-contained: the sub-agent sees only this text (not this conversation). "
    "Say what to find or do and what to answer with."
)
_WRITES = (
    "true: the sub-agent may also change files and run commands (the user approves this delegation, "
    "and each change as usual); false: it only reads."
)


class DelegateArgs(ToolArgs, frozen=True):
    """A task for a sub-agent, and what it may do."""

    task: Annotated[str, Meta(description=_TASK)]
    writes: Annotated[bool, Meta(description=_WRITES)] = False
    max_steps: Annotated[int, Meta(description="The most model steps the sub-agent may take.", ge=1)] = 10


@cache
def _capped(max_steps: int) -> type[DelegateArgs]:
    """The arguments under the user's `delegate_max_steps` (one class per cap)."""
    described = f"The most model steps the sub-agent may take (at most {max_steps}, the user's `delegate_max_steps`)."
    steps: Any = Annotated[int, Meta(description=described, ge=1, le=max_steps)]
    return with_argument(DelegateArgs, "max_steps", steps, max_steps)


class Delegator(Protocol):
    """Runs one delegation as a child turn of the running turn (agent/subagent.py)."""

    async def delegate(self, args: DelegateArgs, call_id: str) -> ToolResult: ...


class DelegateTool(Tool[DelegateArgs]):
    name: ClassVar[str] = "delegate"
    description: ClassVar[str] = (
        "Hand a self-contained task to a sub-agent with a fresh context (it does not see this "
        "conversation) and get its final answer back as this call's result. Use it for a side "
        "investigation that would fill your context (searching and reading many files), or to run "
        "independent tasks in parallel (several delegate calls in one step run together). The "
        "sub-agent only reads unless `writes` is true."
    )
    args_type = DelegateArgs
    kind: ClassVar[str] = "other"
    # a call with `writes` changes things: approved like any such call (`reads_only`)
    read_only: ClassVar[bool] = False
    cancellable: ClassVar[bool] = True  # its child turn is cancelled (agent/call_cancel.py)
    untitled: ClassVar[str] = "Delegate"

    def __init__(self, *, max_steps: int = 10) -> None:
        self.max_steps = max_steps
        self.args_type = _capped(max_steps)

    def reads_only(self, raw: object) -> bool:
        """A delegation changes things only when the model asks for `writes`."""
        return not (isinstance(raw, Mapping) and raw.get("writes") is True)

    def title(self, args: DelegateArgs) -> str:
        first = " ".join(args.task.split())
        short = first if len(first) <= 60 else first[:59] + "…"
        return f"Delegate{' (with writes)' if args.writes else ''}: {short}"

    async def run(self, args: DelegateArgs, ctx: ToolContext) -> ToolResult:
        if not args.task.strip():
            return ToolResult("delegate: 'task' is empty; describe the whole task for the sub-agent", is_error=True)
        if len(args.task) > MAX_TASK_CHARS:
            return ToolResult(
                f"delegate: 'task' is {len(args.task)} characters; keep it under {MAX_TASK_CHARS} "
                f"(the sub-agent can read files itself)",
                is_error=True,
            )
        if ctx.sub_agents is None:
            return ToolResult("delegate: this turn cannot hand tasks to sub-agents", is_error=True)
        return await ctx.sub_agents().delegate(args, ctx.call_id)
