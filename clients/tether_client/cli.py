"""`tether run` and `tether demo`: one headless turn, printed as it streams.

Owns: the human output, `--json` (one object per event line, like `codex exec --json`),
and the exit code (EXIT_CODES); the daemon comes from a *connector* (`Connect`): a spawned
`tether serve` by default, or one `tether_cli` passes. Must not: import the daemon.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from tether_protocol import (
    AgentMessageChunk,
    AgentThoughtChunk,
    DiffContent,
    InvalidParams,
    JsonObject,
    ReportParams,
    RunReport,
    SessionNotification,
    SessionUpdate,
    ToolCall,
    ToolCallContent,
    ToolCallContentBlock,
    ToolCallUpdate,
    structure,
    unstructure,
)

from ._client import DaemonStartError, TetherClient
from ._peer import ClientError, RequestHandler

if TYPE_CHECKING:  # imported when the daemon first asks (a turn that asks nothing does not pay)
    from tether_protocol import PermissionOption, PermissionToolCall

# (tether serve's flags, the workspace, the handler of the daemon's requests) -> a client
Connect = Callable[[list[str], Path, RequestHandler], Awaitable[TetherClient]]

EXIT_CODES = {
    "end_turn": 0,
    "max_tokens": 3,
    "max_turn_requests": 3,
    "refusal": 4,
    "cancelled": 130,
}
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_REJECTED = 5  # the turn ended, but an approval was rejected: what it asked was not done
EXIT_PIPE = 141  # 128 + SIGPIPE: the reader of stdout went away, as `tether sessions` does
_SERVE_FLAGS = (
    "provider", "model", "base_url", "script", "max_steps", "mode", "home", "log_level",
    "max_retries", "record", "cassette",
)
_PREVIEW_LINES = 6


async def spawn_daemon(serve_args: list[str], workspace: Path, on_request: RequestHandler) -> TetherClient:
    """The default connector: `python -m tether serve` as a child process, on its stdio."""
    return await TetherClient.spawn(*serve_args, cwd=workspace, on_request=on_request)


def run_main(args: argparse.Namespace, connect: Connect = spawn_daemon) -> int:
    workspace = Path(args.workspace or os.getcwd()).resolve()
    if not workspace.is_dir():
        print(f"tether run: workspace {workspace} is not a directory", file=sys.stderr)
        return EXIT_USAGE
    serve_args = ["--workspace", str(workspace)]
    for key in _SERVE_FLAGS:
        value = getattr(args, key, None)
        if value is not None:
            serve_args += [f"--{key.replace('_', '-')}", str(value)]
    return asyncio.run(_run(args.prompt, workspace, serve_args, connect, json_mode=args.json))


def demo_main(args: argparse.Namespace, examples: Path, connect: Connect = spawn_daemon) -> int:
    """A scripted turn on a copy of ``examples``' demo workspace (`demo.json` its script)."""
    scratch = Path(tempfile.mkdtemp(prefix="tether-demo-"))
    workspace = scratch / "workspace"
    shutil.copytree(examples / "demo-workspace", workspace)
    serve_args = [
        "--workspace", str(workspace),
        "--provider", "scripted",
        "--script", str(examples / "demo.json"),
        "--home", str(scratch / "home"),
    ]
    prompt = "What does this project do, and where does it start?"
    if not args.json:
        print(f"tether demo: a scripted model (no API key) in a copy of {examples / 'demo-workspace'}")
        print(f"workspace: {workspace}\n\n> {prompt}\n")
    try:
        return asyncio.run(_run(prompt, workspace, serve_args, connect, json_mode=args.json))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


async def _run(prompt: str, workspace: Path, serve_args: list[str], connect: Connect, *, json_mode: bool) -> int:
    approver = TerminalApprover()
    try:
        client = await connect(serve_args, workspace, approver.on_request)
    except DaemonStartError as exc:
        print(exc, file=sys.stderr)
        return exc.exit_code
    try:
        code = await _run_turn(prompt, workspace, client, json_mode=json_mode)
    except BrokenPipeError:
        # The reader went away (`tether run --json | head`): stop quietly, as a command
        # killed by SIGPIPE does, and let nothing else write to the closed pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_PIPE
    if code == 0 and approver.rejected:
        sys.stderr.write(
            f"tether run: {approver.rejected} approval{'s' if approver.rejected != 1 else ''} rejected, so "
            f"what {'they' if approver.rejected != 1 else 'it'} asked was not done (exit code {EXIT_REJECTED})\n"
        )
        return EXIT_REJECTED
    return code


async def _run_turn(prompt: str, workspace: Path, client: TetherClient, *, json_mode: bool) -> int:
    out = sys.stdout
    render = JsonRenderer(out) if json_mode else HumanRenderer(out)
    try:
        await client.initialize()
        session = await client.new_session(workspace)
        render.session(session.id, workspace)
        turn = session.prompt(prompt)
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, turn.cancel)
        except (NotImplementedError, RuntimeError):
            pass
        try:
            async for update in turn:
                render.update(update)
        except ClientError as exc:
            render.error(exc.code, exc.message)
            return EXIT_USAGE if exc.code in (-32011, -32013, -32014) else EXIT_ERROR
        stop = turn.stop_reason or "end_turn"
        turn_id = turn.turn_id
        report = None
        if turn_id:
            reports = await client.request(
                "_tether/session/report", unstructure(ReportParams(session.id, turn_id))
            )
            report = reports["reports"][0] if reports["reports"] else None  # raw: --json prints it as sent
        render.end(stop, turn_id, report)
        return EXIT_CODES.get(stop, EXIT_ERROR)
    finally:
        await client.close()


class TerminalApprover:
    """Answers the daemon's approval prompts: asks on the terminal, or rejects without one."""

    KEYS = {"y": "allow_once", "a": "allow_always", "n": "reject_once", "N": "reject_always"}

    def __init__(self) -> None:
        self.rejected = 0  # approvals answered with a reject option (the exit code says so)

    async def on_request(self, method: str, params: Any) -> Any:
        if method != "session/request_permission":
            raise ClientError(method, {"code": -32601, "message": f"tether run does not handle {method}"})
        from tether_protocol import RequestPermissionParams, RequestPermissionResult, SelectedOutcome

        request = structure(params, RequestPermissionParams, method=method)  # the raw JSON edge
        _show_request(request.tool_call, sys.stderr)
        option = await self._choose(request.options)
        self.rejected += option.startswith("reject")
        return unstructure(RequestPermissionResult(SelectedOutcome(option)))

    async def _choose(self, options: list[PermissionOption]) -> str:
        err = sys.stderr
        if not sys.stdin.isatty():
            err.write("  rejected: no terminal to ask on; run with --mode auto-edit or full-auto\n")
            return "reject_once"
        offered = {option.option_id for option in options}
        keys = {k: v for k, v in self.KEYS.items() if v in offered or not offered}
        prompt = "  [y] once  [a] always  [n] no  [N] never > "
        if "allow_once_network" in offered:  # a sandboxed command: the network is off unless granted
            keys["w"] = "allow_once_network"
            prompt = "  [y] once  [w] once, with network  [a] always  [n] no  [N] never > "
        loop = asyncio.get_running_loop()
        while True:
            answer = await loop.run_in_executor(None, input, prompt)
            option = keys.get(answer.strip())
            if option:
                return option


def _show_request(call: PermissionToolCall, err: TextIO) -> None:
    err.write(f"\n? {call.title or 'a tool'} wants approval\n")
    for block in call.content or []:
        if isinstance(block, DiffContent):
            import difflib

            old = (block.old_text or "").splitlines(keepends=True)
            new = block.new_text.splitlines(keepends=True)
            err.writelines(difflib.unified_diff(old, new, block.path, block.path))
        elif isinstance(block, ToolCallContentBlock):
            err.write(block.content.text + "\n")


def _typed_update(raw: JsonObject) -> SessionUpdate | None:
    """An update as the protocol's class (the raw JSON edge); None for a kind outside ACP v1's set."""
    try:
        return structure({"sessionId": "", "update": raw}, SessionNotification, method="session/update").update
    except InvalidParams:
        return None


def _text_of(content: list[ToolCallContent] | None) -> str:
    return "".join(block.content.text for block in content or [] if isinstance(block, ToolCallContentBlock))


class HumanRenderer:
    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.color = out.isatty() and not os.environ.get("NO_COLOR")
        self.titles: dict[str, str] = {}
        self.shown: set[str] = set()
        self.in_thought = False
        self.at_line_start = True

    def _style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def _write(self, text: str) -> None:
        if text:
            self.out.write(text)
            self.at_line_start = text.endswith("\n")
            self.out.flush()

    def _newline(self) -> None:
        if not self.at_line_start:
            self._write("\n")

    def session(self, session_id: str, workspace: Path) -> None:
        pass

    def update(self, raw: JsonObject) -> None:
        update = _typed_update(raw)
        if isinstance(update, AgentMessageChunk):
            if self.in_thought:
                self._newline()
                self.in_thought = False
            self._write(update.content.text)
        elif isinstance(update, AgentThoughtChunk):
            if not self.in_thought:
                self._newline()
                self._write(self._style("thinking: ", "2"))
                self.in_thought = True
            self._write(self._style(update.content.text, "2;3"))
        elif isinstance(update, ToolCall):
            self.titles[update.tool_call_id] = update.title
        elif isinstance(update, ToolCallUpdate):
            self._tool_update(update)

    def _tool_update(self, update: ToolCallUpdate) -> None:
        call_id = update.tool_call_id
        if update.title:
            self.titles[call_id] = update.title
        status = update.status
        if status == "in_progress" or (status in ("completed", "failed") and call_id not in self.shown):
            self.shown.add(call_id)
            self._newline()
            self._write(self._style(f"-> {self.titles.get(call_id, call_id)}", "36") + "\n")
        if status in ("completed", "failed"):
            lines = _text_of(update.content).splitlines()
            mark = self._style("ok", "32") if status == "completed" else self._style("failed", "31")
            self._write(f"   {mark}  ({len(lines)} lines)\n")
            for line in lines[:_PREVIEW_LINES]:
                self._write(self._style(f"   | {line[:160]}", "2") + "\n")
            if len(lines) > _PREVIEW_LINES:
                self._write(self._style(f"   | ... {len(lines) - _PREVIEW_LINES} more lines", "2") + "\n")
            self._write("\n")

    def end(self, stop: str, turn_id: str | None, report: JsonObject | None) -> None:
        self._newline()
        facts = [stop]
        if report:
            run = structure(report, RunReport, method="_tether/session/report")  # the raw JSON edge
            usage = run.total_usage
            facts += [
                f"{run.step_count} steps",
                f"{run.tool_call_count} tool calls",
                f"{usage.input_tokens}+{usage.output_tokens} tokens",
                f"{run.total_ms:.0f} ms",
            ]
        self._write(self._style(f"\n[{' · '.join(facts)}]", "2") + "\n")

    def error(self, code: int, message: str) -> None:
        self._newline()
        print(f"tether: error {code}: {message}", file=sys.stderr)


class JsonRenderer:
    """The events as the daemon sent them: updates and the report are the raw JSON."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def _emit(self, obj: JsonObject) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.out.flush()

    def session(self, session_id: str, workspace: Path) -> None:
        self._emit({"event": "session", "sessionId": session_id, "workspace": str(workspace)})

    def update(self, update: JsonObject) -> None:
        self._emit({"event": "update", "update": update})

    def end(self, stop: str, turn_id: str | None, report: JsonObject | None) -> None:
        self._emit({"event": "turn_end", "stopReason": stop, "turnId": turn_id, "report": report})

    def error(self, code: int, message: str) -> None:
        self._emit({"event": "error", "code": code, "message": message})
