"""The `glob` tool: workspace files whose path matches a glob pattern (named so it does not shadow `glob`).

Owns: matching over the gitignore-respecting walk (a directory named literally is searched even if ignored),
sorted workspace-relative output capped at 1000 paths, and hints when nothing matches.
Must not: return directories, follow symlinked directories, list files outside the sandbox, or block the loop.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import anyio.to_thread
from msgspec import Meta

from tether.tools.args import ToolArgs
from tether.tools.base import Tool, ToolContext, ToolError, ToolResult
from tether.tools.globpattern import compile_glob, literal_prefix
from tether.tools.textfile import display_path
from tether.tools.walk import symlink_target_file, walk

if TYPE_CHECKING:
    from pathlib import Path

    from tether.tools.sandbox import WorkspaceSandbox

__all__ = ["GlobArgs", "GlobTool"]

MAX_PATHS = 1000


class GlobArgs(ToolArgs, frozen=True):
    """What `glob` is given: a path pattern and the directory it is matched under."""

    pattern: Annotated[str, Meta(description="Glob pattern, e.g. '**/*.py'.")]
    path: Annotated[str, Meta(description="Directory to search, relative to the root.")] = "."


class GlobTool(Tool[GlobArgs]):
    name: ClassVar[str] = "glob"
    description: ClassVar[str] = (
        "Find files by path pattern, e.g. '**/*.py', 'src/**/test_*.{ts,tsx}', 'docs/*.md'. "
        "The pattern is matched against each file's path relative to `path` (default: the "
        "workspace root): '*' stays within one directory, '**' spans any number of them. "
        "Gitignored files and .git are skipped. Returns sorted workspace-relative paths."
    )
    args_type = GlobArgs
    kind: ClassVar[str] = "search"
    untitled: ClassVar[str] = "Find files"

    def title(self, args: GlobArgs) -> str:
        pattern, path = args.pattern, args.path
        return f"Find '{pattern}'" if path in ("", ".") else f"Find '{pattern}' in {path}"

    async def run(self, args: GlobArgs, ctx: ToolContext) -> ToolResult:
        pattern = args.pattern
        regex = compile_glob(pattern)
        real = ctx.sandbox.resolve(args.path)
        stop = threading.Event()
        try:
            matches = await anyio.to_thread.run_sync(
                _find, ctx.sandbox, real, pattern, regex, stop, abandon_on_cancel=True
            )
        finally:
            stop.set()  # a cancelled call must not leave the walk running in its thread
        return ToolResult(_format(ctx.sandbox.relative(real), pattern, matches))


def _find(sandbox: WorkspaceSandbox, real: Path, pattern: str, regex: Any, stop: threading.Event) -> list[str]:
    base = sandbox.relative(real)
    if not real.is_dir():
        if real.exists():
            raise ToolError(f"'{base}' is a file, not a directory; give a directory as 'path'")
        raise ToolError(f"no such directory '{base}'")
    base = "" if base == "." else base
    start = "/".join(part for part in (base, literal_prefix(pattern)) if part)
    start_abs = sandbox.absolute(start)
    if os.path.realpath(start_abs) != start_abs:
        start = base  # the literal prefix goes through a symlink: let the walker decide
    elif not os.path.isdir(start_abs):
        return []
    cut = len(base) + 1 if base else 0
    found: list[str] = []
    for entry in walk(sandbox, start or ".", stop=stop):
        if not (entry.is_file or entry.is_symlink) or not regex.fullmatch(entry.rel[cut:]):
            continue
        if entry.is_symlink and not symlink_target_file(sandbox, entry.rel):
            continue
        found.append(entry.rel)
    found.sort()
    return found


def _format(base: str, pattern: str, matches: list[str]) -> str:
    where = "the workspace" if base == "." else f"'{base}'"
    if not matches:
        text = f"no files match '{pattern}' in {where}"
        if "/" not in pattern and "**" not in pattern:
            text += (
                f" (the pattern is matched against paths relative to {where};"
                f" use '**/{pattern}' to look in subdirectories too)"
            )
        return text
    lines = [display_path(rel) for rel in matches[:MAX_PATHS]]
    if len(matches) > MAX_PATHS:
        lines.append(f"[showing {MAX_PATHS} of {len(matches)} matching files; use a narrower pattern or path]")
    return "\n".join(lines)
