"""Workspace tools the agent can call, and the sandbox that confines them to the workspace.

Each tool declares its arguments as a frozen attrs class (tools/args.py: `arg()` gives a
field its description and bounds); the JSON Schema the model sees is generated from it,
and `validate_args(tool, raw)` turns the model's JSON into that typed object.

Owns: re-exporting the public names of this package, each imported on first use (a
session opens with the sandbox and the read ledger, not every tool).
Must not: hold logic of its own.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names of __all__, for type checkers (re-exported: `X as X`)
    from tether.tools.base import Tool as Tool
    from tether.tools.base import ToolContext as ToolContext
    from tether.tools.base import ToolError as ToolError
    from tether.tools.base import ToolLocation as ToolLocation
    from tether.tools.base import ToolResult as ToolResult
    from tether.tools.base import validate_args as validate_args
    from tether.tools.glob_tool import GlobTool as GlobTool
    from tether.tools.grep import GrepTool as GrepTool
    from tether.tools.list_dir import ListDirTool as ListDirTool
    from tether.tools.read_file import ReadFileTool as ReadFileTool
    from tether.tools.registry import ToolRegistry as ToolRegistry
    from tether.tools.registry import default_read_only_tools as default_read_only_tools
    from tether.tools.sandbox import SandboxError as SandboxError
    from tether.tools.sandbox import WorkspaceSandbox as WorkspaceSandbox

_WHERE = {
    "GlobTool": "glob_tool",
    "GrepTool": "grep",
    "ListDirTool": "list_dir",
    "ReadFileTool": "read_file",
    "SandboxError": "sandbox",
    "Tool": "base",
    "ToolContext": "base",
    "ToolError": "base",
    "ToolLocation": "base",
    "ToolRegistry": "registry",
    "ToolResult": "base",
    "WorkspaceSandbox": "sandbox",
    "default_read_only_tools": "registry",
    "validate_args": "base",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'tether.tools' has no attribute {name!r}")
    return getattr(importlib.import_module(f"tether.tools.{module}"), name)
