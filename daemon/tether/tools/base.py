"""The tool interface shared by every workspace tool, and argument validation.

Owns: `Tool`, its result/context types, `ToolError`, and `validate_args` (a small
hand-written checker for the JSON-schema subset our tool schemas use).
Must not: touch the filesystem, know about specific tools, or depend on the agent loop.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    # Only for annotations: sandbox.py imports ToolError from here at runtime.
    from tether.sandbox import SandboxChoice
    from tether.tools.sandbox import WorkspaceSandbox

__all__ = [
    "ChangePreview",
    "CommandRun",
    "FileIO",
    "MutatingTool",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolLocation",
    "ToolResult",
    "validate_args",
]


class ToolError(Exception):
    """A failure the model should see as an error result (message is shown to the model)."""


@dataclass(slots=True)
class ToolLocation:
    path: str  # absolute path (what ACP `locations[].path` wants)
    line: int | None = None  # 1-based line, or None


@dataclass(slots=True)
class CommandRun:
    """What a command did, as data (callers never read it back out of the text)."""

    exit_code: int | None  # None: it did not exit by itself (timed out or killed)
    duration_s: float  # start to the death of its process group
    output: str  # its combined output as the model sees it (head and tail), without the footer
    signal: str | None = None  # the signal that killed it ("SIGTERM"), None when it exited
    timed_out: bool = False


@dataclass(slots=True)
class ToolResult:
    text: str  # what the model gets back
    is_error: bool = False
    # places the result points at (e.g. grep hits, capped at 50)
    locations: list[ToolLocation] = field(default_factory=list)
    # run_command: exit code, duration and output
    command: CommandRun | None = None
    # the file changes of a call that changed files: the previews that were approved
    # (all their hunks, also when the user kept only some)
    changes: list[ChangePreview] = field(default_factory=list)
    # update_plan: the plan as ACP PlanEntry fields (content, priority, status)
    plan: list[dict[str, str]] | None = None


class FileIO(Protocol):
    """Where file text comes from and goes to: the editor's buffers or the disk.

    The server picks the implementation from the client's capabilities (ACP `fs/*`,
    LSP `workspace/applyEdit` + document sync, or atomic disk writes). Paths are
    absolute and already inside the sandbox.
    """

    async def read_text(self, path: Path) -> str: ...

    async def write_text(self, path: Path, text: str) -> None: ...

    async def delete(self, path: Path) -> None: ...

    async def move(self, source: Path, target: Path) -> None: ...


class ReadLedger(Protocol):
    """What the model last read of each file (a hash), so edits never clobber newer text."""

    def record(self, path: Path, text: str) -> None: ...

    def check(self, path: Path, current: str) -> None:
        """Raise ToolError("... changed since you read it, read it again") if stale."""
        ...


@dataclass(slots=True)
class ToolContext:
    sandbox: WorkspaceSandbox
    call_id: str = ""
    # open editor buffers keyed by absolute path -> text; tools read these instead of disk when present
    documents: Mapping[str, str] = field(default_factory=dict)
    # Set by the server for mutating tools (None in read-only contexts and older tests).
    files: FileIO | None = None
    reads: ReadLedger | None = None
    # run_command streams its output here while it runs (text chunks, in order).
    on_output: Callable[[str], None] | None = None
    # Environment variables passed to commands besides the minimal core set (config
    # `allow_env`; globs allowed).
    env_allow: tuple[str, ...] = ()
    # The OS sandbox commands run in; None: the process default (tether.sandbox).
    command_sandbox: SandboxChoice | None = None
    # This call may use the network (the approval's verdict; sandboxed commands only).
    network: bool = False
    # False in read-only mode: the command runs in a sandbox where nothing in the
    # workspace can be written (its private temp dir stays writable).
    workspace_writable: bool = True
    # Directories commands must not read (Tether's config and history), where the
    # sandbox can hide them.
    hidden_paths: tuple[str, ...] = ()


@dataclass(slots=True)
class ChangePreview:
    """One file change a mutating tool would make, shown for approval before it happens."""

    path: str  # absolute
    old_text: str | None  # None: the file does not exist yet
    new_text: str | None  # None: the file will be deleted
    move_to: str | None = None  # absolute target of a move
    unified_diff: str = ""  # workspace-relative headers, 3 lines of context


class Tool(abc.ABC):
    name: ClassVar[str]
    description: ClassVar[str]  # for the model
    # JSON schema (type object, properties, required, additionalProperties false)
    input_schema: ClassVar[dict[str, Any]]
    kind: ClassVar[str]  # ACP ToolKind: "read" | "search" | ...
    read_only: ClassVar[bool] = True

    def title(self, args: Mapping[str, Any]) -> str:
        """Human title shown in the editor; must cope with unvalidated args."""
        return self.name

    def locations(self, args: Mapping[str, Any], sandbox: WorkspaceSandbox) -> list[ToolLocation]:
        """Places known before running (the `path` argument); never raises."""
        path = args.get("path") if isinstance(args, Mapping) else None
        if not isinstance(path, str):
            return []
        try:
            return [ToolLocation(str(sandbox.resolve(path)))]
        except Exception:  # a bad path is reported by run(), not here
            return []

    @abc.abstractmethod
    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult: ...


class MutatingTool(Tool):
    """A tool that changes files: previewed (no side effects), approved, then applied.

    `run()` is `preview()` then `apply()` with every hunk accepted; the agent loop calls
    the two halves itself so the approval sits between them.
    """

    read_only: ClassVar[bool] = False

    @abc.abstractmethod
    async def preview(self, args: Mapping[str, Any], ctx: ToolContext) -> list[ChangePreview]:
        """What would change; raises ToolError (bad path, no match, stale read, ...)."""

    @abc.abstractmethod
    async def apply(
        self,
        args: Mapping[str, Any],
        ctx: ToolContext,
        previews: list[ChangePreview],
        accepted_hunks: Mapping[str, list[int]] | None = None,
    ) -> ToolResult:
        """Make the previewed changes through `ctx.files`.

        `accepted_hunks` maps a path to the indexes (0-based, in unified-diff order) of the
        hunks the user kept; None means all. The result tells the model what was kept.
        """

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return await self.apply(args, ctx, await self.preview(args, ctx))


_TYPE_CHECKS: dict[str, tuple[str, Any]] = {
    "string": ("a string", lambda v: isinstance(v, str)),
    # bool is an int subclass in Python but never a JSON integer
    "integer": ("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "boolean": ("a boolean", lambda v: isinstance(v, bool)),
    "array": ("an array", lambda v: isinstance(v, list)),
    "object": ("an object", lambda v: isinstance(v, Mapping)),
}


def _expected(prop: Mapping[str, Any]) -> str:
    kind = prop.get("type", "string")
    if "enum" in prop:
        return "one of " + ", ".join(_show(option) for option in prop["enum"])
    text = _TYPE_CHECKS[kind][0] if kind in _TYPE_CHECKS else str(kind)
    if kind == "array":
        items = prop.get("items", {}).get("type")
        if items in _TYPE_CHECKS:
            text = f"an array of {items}s"
        least = prop.get("minItems")
        if least:
            text += f" with at least {least} item{'' if least == 1 else 's'}"
        return text
    low, high = prop.get("minimum"), prop.get("maximum")
    if low is not None and high is not None:
        return f"{text} between {low} and {high}"
    if low is not None:
        return f"{text} >= {low}"
    if high is not None:
        return f"{text} <= {high}"
    return text


def _show(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _check_value(tool_name: str, key: str, prop: Mapping[str, Any], value: Any) -> Any:
    """One value against its property schema; `key` is the full name for messages (`edits[1].old_text`)."""
    kind = prop.get("type", "string")
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        value = int(value)  # JSON encoders sometimes emit 10.0 for 10
    check = _TYPE_CHECKS.get(kind)
    ok = check is None or check[1](value)
    if ok and kind == "integer":
        low, high = prop.get("minimum"), prop.get("maximum")
        ok = (low is None or value >= low) and (high is None or value <= high)
    if ok and kind == "array":
        ok = len(value) >= prop.get("minItems", 0)
    if ok and "enum" in prop:
        ok = any(value == option and type(value) is type(option) for option in prop["enum"])
    if not ok:
        raise ToolError(f"{tool_name}: '{key}' must be {_expected(prop)}, got {_show(value)}")
    if kind == "array" and "items" in prop:
        return [_check_value(tool_name, f"{key}[{i}]", prop["items"], item) for i, item in enumerate(value)]
    if kind == "object" and "properties" in prop:
        return _check_object(tool_name, f"{key}.", prop, value)
    return value


def _check_object(tool_name: str, prefix: str, schema: Mapping[str, Any], args: Mapping[str, Any]) -> dict[str, Any]:
    properties: Mapping[str, Mapping[str, Any]] = schema.get("properties", {})
    required: list[str] = list(schema.get("required", []))
    unknown = sorted(str(k) for k in args if k not in properties)
    if unknown and schema.get("additionalProperties", True) is False:
        names = ", ".join(properties) or "(none)"
        raise ToolError(f"{tool_name}: unknown argument '{prefix}{unknown[0]}'; expected one of: {names}")

    out: dict[str, Any] = {}
    for key, prop in properties.items():
        value = args.get(key)
        if value is None:
            if key in required:
                raise ToolError(f"{tool_name}: missing required argument '{prefix}{key}' ({_expected(prop)})")
            if "default" in prop:
                out[key] = prop["default"]
            continue
        out[key] = _check_value(tool_name, prefix + key, prop, value)
    return out


def validate_args(tool: Tool, args: Any) -> dict[str, Any]:
    """Check `args` against `tool.input_schema`; return a copy with schema defaults filled in.

    Supports the subset our schemas use: required keys, string/integer/boolean types,
    string enums, integer minimum/maximum, arrays (minItems, typed items) of objects
    with their own properties, and additionalProperties false (unknown keys refused).
    Nested values are named like `edits[1].old_text` in errors. A null for an optional
    key counts as absent, because models often send `"offset": null` to mean "not given".
    """
    if not isinstance(args, Mapping):
        raise ToolError(f"{tool.name}: arguments must be a JSON object, got {_show(args)}")
    return _check_object(tool.name, "", tool.input_schema, args)
