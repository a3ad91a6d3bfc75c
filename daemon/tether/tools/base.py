"""The tool interface shared by every workspace tool, and argument validation.

Owns: `Tool` (generic in its args Struct), its result/context types, `ToolError`
(defined in tools/errors.py, so the sandbox and the ledger need not import this), and `validate_args` (the model's JSON -> the tool's typed args, through tools/args.py).
Must not: touch the filesystem, know about specific tools, or depend on the agent loop.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Generic, Protocol, TypeVar

from tether.tools.args import ArgError, JsonSchema, dump_args, parse_args, required_names, schema_of
from tether.tools.errors import ToolError

if TYPE_CHECKING:
    from collections.abc import Awaitable

    # Only for annotations (sandbox.py imports ToolError from tools/errors.py).
    from pathlib import Path

    from tether.netproxy.proxy import ProxyRules
    from tether.sandbox import SandboxChoice
    from tether.tools.changes import ChangeRecorder, FileChange
    from tether.tools.delegate import Delegator
    from tether.tools.sandbox import WorkspaceSandbox
    from tether_protocol import JsonObject
    from tether_protocol.conversation import ContentBlock

    Elicit = Callable[[str, str, JsonObject], Awaitable[JsonObject]]

A = TypeVar("A")  # a tool's args Struct (tools/args.py)

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
    # what the call changed in the workspace, file by file, and the contents to store
    # (tools/changes.py; committed with the result, for rewind)
    file_changes: list[FileChange] = field(default_factory=list)
    file_blobs: dict[str, bytes] = field(default_factory=dict)
    # content blocks the client is shown besides the text (an MCP tool's images, audio,
    # resources, resource links), stored with the result so a replay shows them again
    blocks: tuple[ContentBlock, ...] = ()


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

    def record_digest(self, path: Path, digest: str) -> None: ...

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
    # The user's `sandbox` setting ("auto" | "bwrap" | "landlock" | "off") of the connection
    # whose turn makes the call: what grep's rg and a command without `command_sandbox` run in.
    sandbox_setting: str = "auto"
    # The OS sandbox commands run in (the approval's); None: `sandbox_setting`'s.
    command_sandbox: SandboxChoice | None = None
    # This call may use the network (the approval's verdict; sandboxed commands only).
    network: bool = False
    # False in read-only mode: the command runs in a sandbox where nothing in the
    # workspace can be written (its private temp dir stays writable).
    workspace_writable: bool = True
    # Directories commands must not read (Tether's config and history), where the
    # sandbox can hide them.
    hidden_paths: tuple[str, ...] = ()
    # Token files commands see without their credential lines (sandbox/credential_stores.py).
    filtered_paths: tuple[str, ...] = ()
    # Unix sockets a command with the network may connect to (`allow_unix_sockets`).
    unix_sockets: tuple[str, ...] = ()
    # `network = "allowlist"` and no network granted: what the command's proxy allows.
    net_rules: ProxyRules | None = None
    # Tells the user something beside the result (a notice: hosts the proxy refused).
    on_notice: Callable[[str], None] | None = None
    # Records what the call changes (the file tools' writes, a command's scan); None: not recorded.
    recorder: ChangeRecorder | None = None
    # Run without the user's answer: what the command does to autorun paths is put back
    # after it (tools/autorun_guard.py).
    guard_autoruns: bool = False
    # Asks the user a form on an MCP server's behalf (its name, message, requested schema):
    # the answer `{action, content?}` (agent/executor.py; a client that cannot answer: decline).
    elicit: Elicit | None = None
    # The running turn's sub-agents, made when a `delegate` call runs (agent/subagent.py);
    # None: this call's turn cannot delegate (a sub-agent's own turn, a read-only context).
    sub_agents: Callable[[], Delegator] | None = None


@dataclass(slots=True)
class ChangePreview:
    """One file change a mutating tool would make, shown for approval before it happens."""

    path: str  # absolute
    old_text: str | None  # None: the file does not exist yet
    new_text: str | None  # None: the file will be deleted
    move_to: str | None = None  # absolute target of a move
    unified_diff: str = ""  # workspace-relative headers, 3 lines of context


class Tool(abc.ABC, Generic[A]):
    """A workspace tool; its arguments are the Struct `args_type` (tools/args.py).

    `run` (and a mutating tool's `preview`/`apply`), `title` and `locations` take the
    typed args object that `validate_args` made; `title_for`/`locations_for` are for
    arguments that were not validated (a call being announced), and never raise.
    """

    name: ClassVar[str]
    description: ClassVar[str]  # for the model
    # set on each tool class (or instance, for bounds from configuration: `with_argument`):
    # the schema and validation come from it
    args_type: type[A]
    kind: ClassVar[str]  # ACP ToolKind: "read" | "search" | ...
    read_only: ClassVar[bool] = True
    # A running call may be stopped alone (`tool_call/cancel`): cancelling `run` is safe.
    cancellable: ClassVar[bool] = False
    # The title of a call whose arguments are too broken to say more.
    untitled: ClassVar[str] = ""

    @property
    def input_schema(self) -> JsonSchema:
        """The JSON Schema the model is given, generated from `args_type`."""
        return _schema(self.args_type)

    def parse(self, raw: object) -> A:
        """The typed args for the model's JSON `raw`; ArgError says what is wrong."""
        return parse_args(self.args_type, raw)

    def title(self, args: A) -> str:
        """Human title shown in the editor."""
        return self.name

    def approval_text(self, args: A) -> str:
        """What an approval prompt shows of a call that is neither a diff nor a command."""
        return ""

    def locations(self, args: A, sandbox: WorkspaceSandbox) -> list[ToolLocation]:
        """Places known before running (the `path` argument, unless it is the default
        "." of the whole workspace); never raises."""
        path = getattr(args, "path", None)
        if not isinstance(path, str) or path == ".":
            return []
        try:
            return [ToolLocation(str(sandbox.resolve(path)))]
        except Exception:  # a bad path is reported by run(), not here
            return []

    def salvage(self, raw: object) -> A | None:
        """`raw` as args, leaving out optional arguments that are wrong; None when a
        required one is wrong or missing (for titles of calls that will be refused)."""
        if isinstance(raw, self.args_type):
            return raw
        if not isinstance(raw, Mapping):
            return None
        try:
            return validate_args(self, raw)
        except ToolError:
            pass
        required = {k: v for k, v in raw.items() if k in required_names(self.args_type)}
        try:
            validate_args(self, required)
        except ToolError:
            return None
        kept = dict(required)
        for key, value in raw.items():
            try:
                validate_args(self, {**required, key: value})
            except ToolError:
                continue
            kept[key] = value
        return validate_args(self, kept)

    def title_for(self, raw: object) -> str:
        """The title of a call from its arguments as sent (or already validated)."""
        args = self.salvage(raw)
        return (self.untitled or self.name) if args is None else self.title(args)

    def locations_for(self, raw: object, sandbox: WorkspaceSandbox) -> list[ToolLocation]:
        args = self.salvage(raw)
        return [] if args is None else self.locations(args, sandbox)

    def reads_only(self, raw: object) -> bool:
        """Whether this call (its arguments as sent) only reads: run with the reads, never
        approved; `read_only` unless a tool's calls differ (`delegate` with `writes`)."""
        return self.read_only

    def dump(self, args: A) -> JsonObject:
        """The validated arguments as JSON (defaults filled in), as the user is shown them."""
        return dump_args(args)

    @abc.abstractmethod
    async def run(self, args: A, ctx: ToolContext) -> ToolResult: ...

    async def call(self, raw: object, ctx: ToolContext) -> ToolResult:
        """Validate the model's arguments, then run (what tests and the bench call)."""
        return await self.run(validate_args(self, raw), ctx)


class MutatingTool(Tool[A]):
    """A tool that changes files: previewed (no side effects), approved, then applied.

    `run()` is `preview()` then `apply()` with every hunk accepted; the agent loop calls
    the two halves itself so the approval sits between them.
    """

    read_only: ClassVar[bool] = False

    @abc.abstractmethod
    async def preview(self, args: A, ctx: ToolContext) -> list[ChangePreview]:
        """What would change; raises ToolError (bad path, no match, stale read, ...)."""

    @abc.abstractmethod
    async def apply(
        self,
        args: A,
        ctx: ToolContext,
        previews: list[ChangePreview],
        accepted_hunks: Mapping[str, list[int]] | None = None,
    ) -> ToolResult:
        """Make the previewed changes through `ctx.files`.

        `accepted_hunks` maps a path to the indexes (0-based, in unified-diff order) of the
        hunks the user kept; None means all. The result tells the model what was kept.
        """

    async def run(self, args: A, ctx: ToolContext) -> ToolResult:
        return await self.apply(args, ctx, await self.preview(args, ctx))


_SCHEMAS: dict[type, JsonSchema] = {}


def _schema(args_type: type) -> JsonSchema:
    """Generated once per args class (tools are made for every session)."""
    if args_type not in _SCHEMAS:
        _SCHEMAS[args_type] = schema_of(args_type)
    return _SCHEMAS[args_type]


def validate_args(tool: Tool[A], raw: object) -> A:
    """The typed args object for the model's JSON `raw`, or ToolError naming the tool,
    the argument and what was expected (`read_file: 'limit' must be an integer >= 1,
    got "ten"`; nested ones are named like `edits[1].old_text`)."""
    try:
        return tool.parse(raw)
    except ArgError as exc:
        raise ToolError(f"{tool.name}: {exc}") from None
