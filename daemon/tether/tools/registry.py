"""The tool registry: which tools exist for a session, by name, in a stable order.

Owns: lookup by name, the specs list sent to the model, and the default read-only set.
Must not: run tools, validate arguments, or know how the agent loop uses results.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from tether.tools.args import JsonSchema
from tether.tools.base import Tool
from tether.tools.glob_tool import GlobTool
from tether.tools.grep import GrepTool
from tether.tools.list_dir import ListDirTool
from tether.tools.read_file import ReadFileTool

__all__ = ["ToolRegistry", "default_read_only_tools"]


class ToolRegistry:
    """Tools keyed by name; iteration and `specs()` follow registration order."""

    def __init__(self, tools: Iterable[Tool[Any]]) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool

    def get(self, name: str) -> Tool[Any] | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[JsonSchema]:
        """What the model is told about each tool, in registration order."""
        return [
            {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
            for tool in self._tools.values()
        ]

    async def refresh(self) -> bool:
        """Bring the tools up to date before a step; whether they changed (an MCP
        server's list can, `tether.mcp.registry`; Tether's own never do)."""
        return False

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool[Any]]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)


def default_read_only_tools() -> list[Tool[Any]]:
    """Fresh instances of the four read-only workspace tools (grep picks rg when present)."""
    return [ReadFileTool(), ListDirTool(), GlobTool(), GrepTool()]
