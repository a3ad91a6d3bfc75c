"""Building each model request: a stable prefix first, what changes last.

The system prompt's stable layer (role, tool rules) and the tool list are byte-identical
from step to step and turn to turn, so provider prompt caches hit; per-turn facts (the
workspace path) go in `dynamic_context`, after it (seed 004's layer order).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..providers.base import ModelRequest

STABLE_SYSTEM_PROMPT = """\
You are Tether, a coding agent working inside the user's workspace through tools.
- Read before you answer questions about code; cite paths as path:line.
- Paths are relative to the workspace root; nothing outside it is reachable.
- Use grep and glob to find things, read_file to read them, list_dir to look around.
- When a tool returns an error, read it and adjust your call instead of repeating it.
- Be brief: the user is in their editor."""


def build_request(
    *,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    workspace: Path,
    model: str,
    max_output_tokens: int,
    session_id: str,
    step: int,
) -> ModelRequest:
    return ModelRequest(
        system=STABLE_SYSTEM_PROMPT,
        messages=messages,
        tools=tools,
        model=model,
        max_output_tokens=max_output_tokens,
        dynamic_context=f"Workspace root: {workspace}",
        session_id=session_id,
        step=step,
    )
