"""The hook points around a tool call: `pre_tool` before it is approved, `post_tool` after.

Owns: firing those stages for one call, applying a `modify` (new arguments validated as the model's are),
and adding a `post_tool` hook's context or reason to the result the model reads.
Must not: decide a call that changes things (the gate does, with `PreTool` on the request).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ..agent.hook_port import PreTool
from ..agent.sink import ToolCallPatch
from ..tools.base import Tool, ToolError, ToolResult, validate_args

if TYPE_CHECKING:
    from ..agent.state import PendingCall
    from .engine import Hooks

__all__ = ["after_tool", "before_tool"]


async def before_tool(hooks: Hooks | None, call: PendingCall, tool: Tool[Any], args: object) -> PreTool:
    if hooks is None or not hooks.wants("pre_tool", tool.name, call.arguments):
        return PreTool(args=args)
    outcome = await hooks.fire("pre_tool", tool=tool.name, arguments=call.arguments or {}, kind=tool.kind)
    if outcome.arguments is not None and outcome.decision != "deny":
        try:
            args = validate_args(tool, outcome.arguments)
        except ToolError as exc:
            return PreTool("deny", f"{outcome.by} changed the arguments to ones {tool.name} refuses: {exc}", args)
        call.arguments = dict(outcome.arguments)
        hooks.sink.emit(ToolCallPatch(call.call_id, raw_input=call.arguments))
    decision = None if outcome.decision == "modify" else outcome.decision
    said = {"deny": "refused by", "ask": "asked by", "allow": "allowed by"}.get(decision or "", "")
    reason = f"{said} {outcome.by}" + (f": {outcome.reason}" if outcome.reason else "")
    return PreTool(decision, reason if decision else "", args)


async def after_tool(hooks: Hooks | None, call: PendingCall, tool: Tool[Any] | None, result: ToolResult) -> ToolResult:
    if hooks is None or tool is None or not hooks.wants("post_tool", tool.name, call.arguments):
        return result
    outcome = await hooks.fire(
        "post_tool",
        tool=tool.name,
        arguments=call.arguments or {},
        result={"text": result.text, "is_error": result.is_error},
    )
    extra = []
    if outcome.decision == "deny" and outcome.reason:
        extra.append(f"[{outcome.by}: {outcome.reason}]")
    if outcome.contexts:
        extra.append(f"[context from hooks]\n{outcome.context_text()}")
    if not extra:
        return result
    return dataclasses.replace(result, text=result.text.rstrip("\n") + "\n\n" + "\n".join(extra))
