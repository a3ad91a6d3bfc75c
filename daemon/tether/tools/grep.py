"""The `grep` tool: regex search over workspace files, via ripgrep or pure Python.

Owns: the arguments, the file list both backends search (the shared walker, the `glob` filter), choosing a
backend, and the output both give (`relpath:line:text`, a count line). Rules and dialects: decision 0009.
Must not: read files itself (the backends do), or search outside the sandbox.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

import anyio.to_thread
from msgspec import Meta

from tether.tools.args import ToolArgs
from tether.tools.base import Tool, ToolContext, ToolError, ToolLocation, ToolResult
from tether.tools.globpattern import compile_glob
from tether.tools.grep_hits import GrepRequest, HitCollector
from tether.tools.grep_python import compile_pattern, search_python
from tether.tools.grep_rg import find_rg, search_rg
from tether.tools.textfile import display_path
from tether.tools.walk import symlink_target_file, walk

if TYPE_CHECKING:
    from pathlib import Path

    from tether.tools.sandbox import WorkspaceSandbox

__all__ = ["GrepArgs", "GrepTool"]

MAX_LOCATIONS = 50
Backend = Literal["auto", "rg", "python"]


class GrepArgs(ToolArgs, frozen=True):
    """What `grep` is given: a regular expression, where to look, and how much to return."""

    pattern: Annotated[str, Meta(description="Regular expression to search for.")]
    path: Annotated[str, Meta(description="File or directory to search.")] = "."
    glob: Annotated[str, Meta(description="Only search files matching this glob, e.g. '*.py'.")] | None = None
    ignore_case: Annotated[bool, Meta(description="Case-insensitive search.")] = False
    max_results: Annotated[int, Meta(ge=1, le=2000)] = 200


class GrepTool(Tool[GrepArgs]):
    name: ClassVar[str] = "grep"
    description: ClassVar[str] = (
        "Search file contents with a regular expression (keep to syntax common to ripgrep "
        "and Python: no look-around or backreferences). Searches `path` (default: the "
        "workspace root), optionally only files matching `glob` ('*.py' matches by file "
        "name at any depth, 'src/**/*.ts' by path relative to `path`). Gitignored and binary "
        "files are skipped. Output: 'path:line:text' lines sorted by path and line, then a "
        "match count; at most `max_results` (default 200) lines."
    )
    args_type = GrepArgs
    kind: ClassVar[str] = "search"
    untitled: ClassVar[str] = "Search"

    def __init__(self, backend: Backend = "auto", rg_path: str | None = None) -> None:
        if backend not in ("auto", "rg", "python"):
            raise ValueError(f"unknown grep backend {backend!r}")
        # "auto" uses rg when it can be found; tests force each backend explicitly.
        self.backend: Backend = backend
        self._rg_path = rg_path

    def title(self, args: GrepArgs) -> str:
        title = f"Search '{args.pattern}'"
        if args.path not in ("", "."):
            title += f" in {args.path}"
        if args.glob:
            title += f" ({args.glob})"
        return title

    def rg_binary(self) -> str | None:
        """The rg to run, or None for the Python backend."""
        if self.backend == "python":
            return None
        found = self._rg_path or find_rg()
        if found is None and self.backend == "rg":
            raise ToolError("grep: the ripgrep backend was requested but no `rg` binary was found")
        return found

    async def run(self, args: GrepArgs, ctx: ToolContext) -> ToolResult:
        sandbox = ctx.sandbox
        pattern = args.pattern
        rg = self.rg_binary()
        if rg is None:
            compile_pattern(pattern, args.ignore_case)  # fail fast, before walking
        glob = args.glob
        glob_regex = compile_glob(glob, "grep: glob") if glob is not None else None
        real = sandbox.resolve(args.path)
        stop = threading.Event()
        try:
            files = await anyio.to_thread.run_sync(
                _files_to_search, sandbox, real, glob, glob_regex, stop, abandon_on_cancel=True
            )
            request = GrepRequest(pattern, args.ignore_case, files, args.max_results)
            collector = HitCollector(request.limit)
            root = str(sandbox.root)
            if rg is not None:
                await search_rg(rg, root, request, collector, ctx.sandbox_setting)
            else:
                await anyio.to_thread.run_sync(search_python, root, request, collector, stop, abandon_on_cancel=True)
        finally:
            stop.set()  # a cancelled call must not leave a search running in its thread
        return _result(sandbox, sandbox.relative(real), request, collector)


def _files_to_search(
    sandbox: WorkspaceSandbox, real: Path, glob: str | None, glob_regex: Any, stop: threading.Event
) -> list[str]:
    rel = sandbox.relative(real)
    if real.is_file():
        return [rel]  # named explicitly: searched even if gitignored or not matching `glob`
    if not real.exists():
        raise ToolError(f"grep: no such file or directory '{rel}'")
    if not real.is_dir():
        raise ToolError(f"grep: '{rel}' is not a regular file or directory")
    cut = 0 if rel == "." else len(rel) + 1
    by_name = glob is not None and "/" not in glob
    files: list[str] = []
    for entry in walk(sandbox, rel, stop=stop):
        if not (entry.is_file or entry.is_symlink):
            continue  # FIFOs and devices would block or never end
        if glob_regex is not None:
            subject = entry.rel.rsplit("/", 1)[-1] if by_name else entry.rel[cut:]
            if not glob_regex.fullmatch(subject):
                continue
        if entry.is_symlink and not symlink_target_file(sandbox, entry.rel):
            continue
        files.append(entry.rel)
    files.sort()
    return files


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}{'es' if noun.endswith('ch') else 's'}"


def _result(sandbox: WorkspaceSandbox, base: str, request: GrepRequest, collector: HitCollector) -> ToolResult:
    if collector.total == 0:
        where = "" if base == "." else f" in '{display_path(base)}'"
        text = f"no matches for {request.pattern!r}{where} (searched {_plural(len(request.files), 'file')})"
        return ToolResult(text)
    hits = collector.hits()
    lines = [f"{display_path(hit.rel)}:{hit.line}:{hit.text}" for hit in hits]
    summary = f"{_plural(collector.total, 'match')} in {_plural(collector.files, 'file')}"
    if collector.total > len(hits):
        summary += f" (showing the first {len(hits)}; narrow the search with path or glob, or raise max_results)"
    lines.append(summary)
    locations = [ToolLocation(sandbox.absolute(hit.rel), hit.line) for hit in hits[:MAX_LOCATIONS]]
    return ToolResult("\n".join(lines), locations=locations)
