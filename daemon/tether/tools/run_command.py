"""The `run_command` tool: one shell command in the workspace, output streamed and capped.

Owns: the args class, the working directory, environment and private temp directory, the
run in `ctx.command_sandbox` (with the allowlist proxy), streamed and capped output, the
footer, autorun guarding and the change scan (docs/decisions/0009-tools.md). Must not: run
outside the workspace, pass secrets, leave a process alive, or decide what is allowed.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import sys
import tempfile
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import anyio
import anyio.to_thread
from msgspec import Meta

from tether.sandbox import CommandSandbox, SandboxPolicy, choose_sandbox
from tether.tools.args import ToolArgs, with_argument
from tether.tools.autorun_guard import put_back, snapshot_if_guarded
from tether.tools.base import CommandRun, Tool, ToolContext, ToolError, ToolLocation, ToolResult
from tether.tools.command_output import HeadTail, OutputStreamer
from tether.tools.process_group import GroupOutcome, run_in_process_group
from tether.tools.subprocess_env import command_env
from tether.tools.visible_text import visible

if TYPE_CHECKING:
    from tether.netproxy.serving import CommandProxy
    from tether.tools.sandbox import WorkspaceSandbox

__all__ = ["RunCommandArgs", "RunCommandTool"]


_OVER_CAP = (
    "timeout {value} s is over the {maximum} s cap; use at most {maximum}, or split the work into shorter commands"
)


def _timeout(maximum: int, default: int) -> Any:
    """The `timeout` argument under a cap (the cap is configuration, so per tool instance)."""
    described = f"Seconds before the command is killed (default {default})."
    return Annotated[int, Meta(description=described, ge=1, le=maximum, extra={"above": _OVER_CAP})]


class RunCommandArgs(ToolArgs, frozen=True):
    """What `run_command` is given: the shell command, its time limit and directory."""

    command: Annotated[str, Meta(description="Shell command, run with /bin/sh -c.")]
    timeout: Annotated[
        int,
        Meta(
            description="Seconds before the command is killed (default 120).", ge=1, le=600, extra={"above": _OVER_CAP}
        ),
    ] = 120
    cwd: Annotated[str, Meta(description="Directory, relative to the workspace root.")] = "."


@functools.cache
def _capped(maximum: int, default: int) -> type[RunCommandArgs]:
    """The arguments under a configured cap (one class per cap: tools are made per session)."""
    if (maximum, default) == (600, 120):
        return RunCommandArgs
    return with_argument(RunCommandArgs, "timeout", _timeout(maximum, default), default)


class RunCommandTool(Tool[RunCommandArgs]):
    name: ClassVar[str] = "run_command"
    description: ClassVar[str] = (
        "Run a shell command (/bin/sh -c) in the workspace and return its combined stdout and "
        "stderr with the exit code. Non-interactive: stdin is empty and there is no terminal, "
        "so pass flags like --yes/--no-edit. Long output keeps only its first and last 8 KiB. "
        "Processes it starts in the background are killed when it finishes."
    )
    args_type = RunCommandArgs
    kind: ClassVar[str] = "execute"
    read_only: ClassVar[bool] = False
    cancellable: ClassVar[bool] = True  # cancelled, its process group is killed
    untitled: ClassVar[str] = "Run a command"

    default_timeout: ClassVar[int] = 120
    max_timeout: int = 600
    head_bytes: ClassVar[int] = 8 * 1024
    tail_bytes: ClassVar[int] = 8 * 1024
    stream_limit: ClassVar[int] = 1024 * 1024
    flush_interval: ClassVar[float] = 0.05
    flush_bytes: ClassVar[int] = 4096
    kill_grace: ClassVar[float] = 0.5

    def __init__(self, max_timeout: int = 600) -> None:
        self.max_timeout = max_timeout
        # The cap is per instance (config), so is the schema that tells the model about it.
        self.args_type = _capped(max_timeout, min(self.default_timeout, max_timeout))

    # A title longer than this is cut, and says how much was cut: the prompt's content
    # always carries the whole command.
    title_lines: ClassVar[int] = 20
    title_chars: ClassVar[int] = 2000

    def title(self, args: RunCommandArgs) -> str:
        """The command itself, exactly as it will run (clients show an `execute` call's
        title as plain text: Zed as the terminal's header, CodeCompanion after
        "Execute: "), newlines kept (folding them would show `ls` + newline + `rm -rf x`
        as one harmless line); a long one is cut, saying so."""
        command = args.command
        if not command.strip():
            return self.untitled
        command = visible(command)  # `\r`, escapes, bidi overrides: shown, never acted on
        shown = "\n".join(command.split("\n")[: self.title_lines])[: self.title_chars]
        if len(shown) == len(command):
            return command
        more_lines = command.count("\n") - shown.count("\n")
        more = f"{more_lines} more line{'s' if more_lines != 1 else ''}, " if more_lines else ""
        return f"{shown} … (cut: {more}{len(command) - len(shown)} more characters not shown here)"

    def locations(self, args: RunCommandArgs, sandbox: WorkspaceSandbox) -> list[ToolLocation]:
        """None: a command's working directory is not a place it changes (clients that
        title a call by its first location would show the directory instead of the
        command); the cwd reaches clients in the content and in `terminal_info`."""
        return []

    async def run(self, args: RunCommandArgs, ctx: ToolContext) -> ToolResult:
        if not args.command.strip():
            raise ToolError("run_command: 'command' is empty")
        if "\0" in args.command:
            raise ToolError(
                "run_command: the command contains a NUL byte, which no shell command can hold; "
                "remove it (write `\\0` or `printf '\\000'` where the command needs one)"
            )
        cwd = ctx.sandbox.resolve(args.cwd)
        if not cwd.is_dir():
            raise ToolError(f"run_command: cwd '{args.cwd}' is not a directory in the workspace")
        choice = ctx.command_sandbox or choose_sandbox(ctx.sandbox_setting)
        if not ctx.workspace_writable and choice.sandbox is None:
            raise ToolError(
                f"run_command: read-only mode runs commands only in an OS sandbox that keeps the "
                f"workspace read-only, and there is none here ({choice.reason})"
            )
        async with contextlib.AsyncExitStack() as stack:
            proxy, notes = await _start_proxy(stack, ctx, choice.sandbox)
            tmpdir = tempfile.mkdtemp(prefix="tether-cmd-")
            try:
                policy = SandboxPolicy(
                    workspace=str(ctx.sandbox.root),
                    tmpdir=tmpdir,
                    cwd=str(cwd),
                    network=ctx.network,
                    hidden=ctx.hidden_paths,
                    writable=ctx.workspace_writable,
                    unix_sockets=ctx.unix_sockets,
                    filtered=ctx.filtered_paths,
                    proxy_socket=proxy.socket if proxy else None,
                    proxy_bundle=proxy.bundle if proxy else None,
                )
                outcome, body = await self._confined(args, str(cwd), ctx, choice.sandbox, policy, tmpdir)
            finally:
                with anyio.CancelScope(shield=True):  # a cancelled call leaves no temp dir either
                    await anyio.to_thread.run_sync(lambda: shutil.rmtree(tmpdir, ignore_errors=True))
            if proxy is not None:
                from tether.netproxy.serving import report_refusals

                notes += report_refusals(proxy.proxy, ctx.on_notice)
        sandbox = choice.sandbox
        failed = outcome.timed_out or outcome.returncode != 0
        text = body + self._footer(outcome, args.timeout) + notes
        if sandbox is not None:
            from tether.sandbox.hints import blocked_hint, hidden_hint

            hints = (
                blocked_hint(body, sandbox, policy) if failed else "",
                hidden_hint(args.command, body, sandbox, policy, os.environ),
            )
            text += "".join("\n" + hint for hint in hints if hint)
        return ToolResult(text, is_error=failed, command=_command_run(outcome, body))

    async def _confined(
        self,
        args: RunCommandArgs,
        cwd: str,
        ctx: ToolContext,
        sandbox: CommandSandbox | None,
        policy: SandboxPolicy,
        tmpdir: str,
    ) -> tuple[GroupOutcome, str]:
        """Runs the command in `sandbox` under `policy`, recording what it changed."""
        env = command_env(ctx.env_allow, tmpdir)
        argv: list[str] | None = None
        fds: list[int] = []
        if sandbox is not None:
            try:
                argv, fds = sandbox.prepare(["/bin/sh", "-c", args.command], policy)
            except (OSError, ValueError) as error:
                raise ToolError(f"run_command: could not set up the {sandbox.name} sandbox: {error}") from error
        elif sys.platform.startswith("linux"):  # unconfined, but what it leaves still dies with it
            from tether.sandbox.landlock import unconfined

            argv = unconfined(["/bin/sh", "-c", args.command])
        recorder = ctx.recorder if ctx.workspace_writable else None
        before = await anyio.to_thread.run_sync(recorder.scan_before) if recorder is not None else None
        autoruns = await snapshot_if_guarded(ctx)
        try:
            return await self._run_streamed(args, cwd, env, argv, ctx, fds)
        finally:
            for fd in fds:
                os.close(fd)
            with anyio.CancelScope(shield=True):  # the scan: what it changed, for rewind
                scan = None if recorder is None or before is None else functools.partial(recorder.scan_after, before)
                if autoruns is not None:  # put back before the scan: rewind records no planted autorun
                    await put_back(autoruns, ctx, scan)
                elif scan is not None:
                    await anyio.to_thread.run_sync(scan)

    async def _run_streamed(
        self,
        args: RunCommandArgs,
        cwd: str,
        env: dict[str, str],
        argv: list[str] | None,
        ctx: ToolContext,
        fds: list[int],
    ) -> tuple[GroupOutcome, str]:
        capture = HeadTail(self.head_bytes, self.tail_bytes)
        stream = OutputStreamer(ctx.on_output, self.flush_interval, self.flush_bytes, self.stream_limit)

        def on_data(data: bytes) -> None:
            capture.feed(data)
            stream.feed(data)

        try:
            async with anyio.create_task_group() as group:
                group.start_soon(stream.tick)
                outcome = await run_in_process_group(
                    args.command,
                    cwd=cwd,
                    env=env,
                    timeout=args.timeout,
                    on_data=on_data,
                    grace=self.kill_grace,
                    argv=argv,
                    pass_fds=fds,
                )
                group.cancel_scope.cancel()
        except OSError as error:  # the shell could not be started (cwd removed, fd limits)
            what = os.path.basename(argv[0]) if argv else "/bin/sh"
            raise ToolError(f"run_command: could not start {what}: {error}") from error
        finally:
            stream.close()  # the last bit is always shown, even when cancelled
        body = capture.render() or "(no output)"
        if not body.endswith("\n"):
            body += "\n"
        return outcome, body

    def _footer(self, outcome: GroupOutcome, timeout: int) -> str:
        took = f"{outcome.duration:.1f} s"
        if outcome.timed_out:
            hint = f" · pass a larger timeout (up to {self.max_timeout} s) if it needs longer"
            return f"killed after timeout ({timeout} s) · {took}" + (hint if timeout < self.max_timeout else "")
        if outcome.returncode < 0:
            return f"killed by {_signal_name(-outcome.returncode)} · {took}"
        return f"exit code {outcome.returncode} · {took}"


async def _start_proxy(
    stack: contextlib.AsyncExitStack[bool | None],
    ctx: ToolContext,
    sandbox: CommandSandbox | None,
) -> tuple[CommandProxy | None, str]:
    """In `allowlist` mode under bubblewrap: the command's proxy (socket, proxy, bundle),
    served until `stack` closes; under Landlock none, and a line saying so."""
    if ctx.net_rules is None or ctx.network or sandbox is None:
        return None, ""
    from tether.netproxy.serving import LANDLOCK_NOTICE, command_proxy

    if sandbox.name != "bwrap":
        return None, "\n" + LANDLOCK_NOTICE
    from tether.shared.proxy import RuntimeDirError

    try:
        return await stack.enter_async_context(command_proxy(ctx.net_rules)), ""
    except (OSError, RuntimeDirError) as error:
        raise ToolError(f"run_command: could not start the network proxy: {error}") from error


def _signal_name(number: int) -> str:
    return next((sig.name for sig in signal.Signals if sig == number), f"signal {number}")


def _command_run(outcome: GroupOutcome, body: str) -> CommandRun:
    """The command's outcome as data: its exit code, or the signal that ended it."""
    exited = not outcome.timed_out and outcome.returncode >= 0
    killed_by = _signal_name(-outcome.returncode) if outcome.returncode < 0 else None
    return CommandRun(
        exit_code=outcome.returncode if exited else None,
        duration_s=outcome.duration,
        output=body,
        signal=killed_by,
        timed_out=outcome.timed_out,
    )
