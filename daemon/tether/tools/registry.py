"""The tool registry: which tools exist for a session, by name, in a stable order.

Owns: lookup by name (a `ToolRef` is imported there, tools/catalog.py), the specs list
sent to the model (from a ref's catalog row: a turn without tool calls imports no tool),
and the default read-only set.
Must not: run tools, validate arguments, or know how the agent loop uses results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from tether.tools.catalog import ToolRef, builtin_refs

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from tether.tools.args import JsonSchema
    from tether.tools.base import Tool

__all__ = ["ToolEntry", "ToolRegistry", "builtin_tools", "default_read_only_tools"]

# a tool, or a built-in one not imported yet (name, kind, read_only and spec without it)
ToolEntry: TypeAlias = "Tool[Any] | ToolRef"


class ToolRegistry:
    """Tools keyed by name; iteration and `specs()` follow registration order."""

    changing: ClassVar[bool] = False  # whether `refresh` can change the tools (an MCP server's can)

    def __init__(self, tools: Iterable[ToolEntry]) -> None:
        self._tools: dict[str, ToolEntry] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool

    def get(self, name: str) -> Tool[Any] | None:
        """The tool itself (a built-in one is imported on its first call)."""
        entry = self._tools.get(name)
        return entry.resolve() if isinstance(entry, ToolRef) else entry

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

    def __iter__(self) -> Iterator[ToolEntry]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)


def builtin_tools() -> list[ToolEntry]:
    """Tether's own tools, in the order the model sees them, each imported on its first call."""
    return list(builtin_refs())


def default_read_only_tools() -> list[Tool[Any]]:
    """Fresh instances of the four read-only workspace tools (grep picks rg when present)."""
    from tether.tools.glob_tool import GlobTool
    from tether.tools.grep import GrepTool
    from tether.tools.list_dir import ListDirTool
    from tether.tools.read_file import ReadFileTool

    return [ReadFileTool(), ListDirTool(), GlobTool(), GrepTool()]
