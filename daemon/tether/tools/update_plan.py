"""The `update_plan` tool: the model's to-do list for the current task, sent whole each time.

Owns: the args class, refusing blank entries, the one-line summary for the model, and `plan_entries` (the
ACP PlanEntry dicts of a `plan` update; entries sent as a JSON string are accepted).
Must not: keep the plan between calls, send anything to the client itself, or touch the workspace.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal, get_args

from msgspec import Meta

from tether.tools.args import ToolArgs, show
from tether.tools.base import Tool, ToolContext, ToolError, ToolResult, validate_args

__all__ = ["PRIORITIES", "STATUSES", "PlanEntry", "UpdatePlanArgs", "UpdatePlanTool", "entries_of", "plan_entries"]

Status = Literal["pending", "in_progress", "completed"]
Priority = Literal["high", "medium", "low"]
STATUSES: tuple[str, ...] = get_args(Status)
PRIORITIES: tuple[str, ...] = get_args(Priority)
_SHOWN = 80  # characters of an entry quoted in the summary


class PlanEntry(ToolArgs, frozen=True):
    """One step of the plan."""

    content: Annotated[str, Meta(description="What this step does.")]
    status: Status
    priority: Priority = "medium"


class UpdatePlanArgs(ToolArgs, frozen=True):
    """What `update_plan` is given: the whole plan, replacing the previous one."""

    entries: Annotated[tuple[PlanEntry, ...], Meta(description="The full plan, in order.")]


class UpdatePlanTool(Tool[UpdatePlanArgs]):
    name: ClassVar[str] = "update_plan"
    description: ClassVar[str] = (
        "Record your plan for the current task as a checklist the user can follow. Send the "
        "whole list every time (it replaces the previous one), mark an entry in_progress when "
        "you start it and completed as soon as it is done. Use it for work with several steps."
    )
    args_type = UpdatePlanArgs
    kind: ClassVar[str] = "think"

    untitled: ClassVar[str] = "Update plan"

    def title(self, args: UpdatePlanArgs) -> str:
        return self.untitled

    async def run(self, args: UpdatePlanArgs, ctx: ToolContext) -> ToolResult:
        entries = entries_of(args)
        return ToolResult(summarize(entries), plan=entries)


def plan_entries(args: Any) -> list[dict[str, str]]:
    """The validated plan as ACP PlanEntry dicts `{"content", "priority", "status"}`.

    Raises ToolError naming the offending field (e.g. `entries[2].status`).
    """
    raw = args.get("entries") if isinstance(args, Mapping) else None
    if isinstance(raw, str):
        # Some models send nested arrays as a JSON string; accept it rather than cost a turn.
        with contextlib.suppress(ValueError):
            args = {**args, "entries": json.loads(raw)}
    return entries_of(validate_args(UpdatePlanTool(), args))


def entries_of(args: UpdatePlanArgs) -> list[dict[str, str]]:
    """The plan as ACP PlanEntry dicts; ToolError for an entry whose content is blank."""
    out: list[dict[str, str]] = []
    for index, entry in enumerate(args.entries):
        content = entry.content.strip()
        if not content:
            raise ToolError(
                f"update_plan: entries[{index}].content must be a non-empty string, got {show(entry.content)}"
            )
        out.append({"content": content, "priority": entry.priority, "status": entry.status})
    return out


def summarize(entries: list[dict[str, str]]) -> str:
    """One line for the model: progress, what is in progress, else what is next."""
    if not entries:
        return "Plan cleared."
    done = sum(entry["status"] == "completed" for entry in entries)
    text = f"Plan updated: {done} of {len(entries)} done"
    active = [_short(entry["content"]) for entry in entries if entry["status"] == "in_progress"]
    pending = [_short(entry["content"]) for entry in entries if entry["status"] == "pending"]
    if active:
        text += "; in progress: " + "; ".join(active)
    elif pending:
        text += f"; next: {pending[0]}"
    return text


def _short(content: str) -> str:
    flat = " ".join(content.split())
    return flat if len(flat) <= _SHOWN else flat[: _SHOWN - 1] + "…"
