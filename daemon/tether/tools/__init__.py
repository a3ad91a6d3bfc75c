"""Workspace tools the agent can call, and the sandbox that confines them to the workspace.

Each tool declares its arguments as a frozen attrs class (tools/args.py: `arg()` gives a
field its description and bounds); the JSON Schema the model sees is generated from it,
and `validate_args(tool, raw)` turns the model's JSON into that typed object.

Owns: re-exporting the public names of this package.
Must not: hold logic of its own.
"""

from __future__ import annotations

from tether.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolLocation,
    ToolResult,
    validate_args,
)
from tether.tools.glob_tool import GlobTool
from tether.tools.grep import GrepTool
from tether.tools.list_dir import ListDirTool
from tether.tools.read_file import ReadFileTool
from tether.tools.registry import ToolRegistry, default_read_only_tools
from tether.tools.sandbox import SandboxError, WorkspaceSandbox

__all__ = [
    "GlobTool",
    "GrepTool",
    "ListDirTool",
    "ReadFileTool",
    "SandboxError",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolLocation",
    "ToolRegistry",
    "ToolResult",
    "WorkspaceSandbox",
    "default_read_only_tools",
    "validate_args",
]
