"""The `update_plan` tool: the model's to-do list for the current task, sent whole each time.

Owns: the plan schema, validating entries (checked here as well as by validate_args,
which may not know nested arrays; messages name `entries[i].field`), the
one-line summary the model gets back, and `plan_entries`, the normalised ACP PlanEntry
dicts the server sends as a `plan` session update.
Must not: keep the plan between calls (each call replaces it), send anything to the
client itself, or touch the workspace.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from tether.tools.base import Tool, ToolContext, ToolError, ToolResult, validate_args

__all__ = ["PRIORITIES", "STATUSES", "UpdatePlanTool", "plan_entries"]

STATUSES: tuple[str, ...] = ("pending", "in_progress", "completed")
PRIORITIES: tuple[str, ...] = ("high", "medium", "low")
_FIELDS = ("content", "status", "priority")
_SHOWN = 80  # characters of an entry quoted in the summary


class UpdatePlanTool(Tool):
    name: ClassVar[str] = "update_plan"
    description: ClassVar[str] = (
        "Record your plan for the current task as a checklist the user can follow. Send the "
        "whole list every time (it replaces the previous one), mark an entry in_progress when "
        "you start it and completed as soon as it is done. Use it for work with several steps."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "entries": {
                "type": "array",
                "description": "The full plan, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "What this step does."},
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "priority": {"type": "string", "enum": list(PRIORITIES), "default": "medium"},
                    },
                    "required": ["content", "status"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["entries"],
        "additionalProperties": False,
    }
    kind: ClassVar[str] = "think"

    def title(self, args: Mapping[str, Any]) -> str:
        return "Update plan"

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        entries = plan_entries(args)
        return ToolResult(summarize(entries), plan=entries)


def plan_entries(args: Any) -> list[dict[str, str]]:
    """The validated plan as ACP PlanEntry dicts `{"content", "priority", "status"}`.

    Raises ToolError naming the offending field (e.g. `entries[2].status`).
    """
    raw = args.get("entries") if isinstance(args, Mapping) else None
    if isinstance(raw, str):
        # Some models send nested arrays as a JSON string; accept it rather than cost a turn.
        try:
            args = {**args, "entries": json.loads(raw)}
        except ValueError:
            pass
    # validate_args may or may not check nested arrays; the checks below hold either way.
    raw = validate_args(UpdatePlanTool(), args)["entries"]
    if not isinstance(raw, list):
        raise ToolError(
            f"update_plan: 'entries' must be an array of {{content, status, priority?}} objects, got {_show(raw)}"
        )
    return [_entry(i, item) for i, item in enumerate(raw)]


def _entry(index: int, item: Any) -> dict[str, str]:
    where = f"entries[{index}]"
    if not isinstance(item, Mapping):
        raise ToolError(f"update_plan: {where} must be an object with content and status, got {_show(item)}")
    unknown = sorted(str(key) for key in item if key not in _FIELDS)
    if unknown:
        raise ToolError(f"update_plan: {where}.{unknown[0]} is not allowed; entries have: {', '.join(_FIELDS)}")
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ToolError(f"update_plan: {where}.content must be a non-empty string, got {_show(content)}")
    status = _choice(where, "status", item.get("status"), STATUSES, default=None)
    priority = _choice(where, "priority", item.get("priority"), PRIORITIES, default="medium")
    return {"content": content.strip(), "priority": priority, "status": status}


def _choice(where: str, key: str, value: Any, allowed: tuple[str, ...], default: str | None) -> str:
    if value is None and default is not None:
        return default
    if value not in allowed:
        options = ", ".join(f'"{option}"' for option in allowed)
        raise ToolError(f"update_plan: {where}.{key} must be one of {options}, got {_show(value)}")
    return str(value)


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


def _show(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)
