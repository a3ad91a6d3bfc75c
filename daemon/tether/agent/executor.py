"""The tool executor: runs a step's tool calls and returns what each did, as data.

Owns: the order calls run in, validating arguments, approving calls that change things,
the commands' sandbox choice, screening results, each call's `CallOutcome` and events, and
per-call cancel scopes (docs/decisions/0011-agent.md); a tool error is a result, not the end.
Must not: stream from the model, write to the store itself (`RunLog`), or build protocol JSON.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import anyio.to_thread

from ..approvals import ApprovalRequest, Verdict
from ..store import StorageFault
from ..tools.base import (
    MutatingTool,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    validate_args,
)
from ..tools.changes import ChangeRecorder
from .approval_request import approval_request
from .hook_port import PreTool, ask_for_read
from .live_output import OutputTail, TerminalStream
from .report import ToolTiming
from .result_screen import screened
from .run_log import CheckpointingAsker, RunLog
from .sink import (
    BlockContent,
    ChangeContent,
    Notice,
    TerminalContent,
    TerminalExited,
    TerminalInfo,
    TerminalStarted,
    TextContent,
    ToolCallPatch,
    TurnSink,
    failed,
    plan_of,
)
from .state import CallOutcome, PendingCall
from .tool_view import safe_title

if TYPE_CHECKING:
    from collections.abc import Callable

    from tether_protocol import JsonObject

    from ..sandbox import SandboxChoice
    from ..tools.delegate import Delegator
    from ..tools.registry import ToolRegistry
    from .guard import InputGuard
    from .session import ActiveTurn, AgentSession
    from .turn_services import TurnServices

log = logging.getLogger("tether.agent")
# MCP servers' questions shown a turn to a client that cannot answer forms (the rest declined unshown)
_TOLD_A_TURN = 3


class ToolExecutor:
    def __init__(
        self,
        session: AgentSession,
        handle: ActiveTurn,
        *,
        tools: ToolRegistry,
        sink: TurnSink,
        services: TurnServices,
        guard: InputGuard,
        journal: RunLog,
        sub_agents: Callable[[], Delegator] | None = None,
    ) -> None:
        self.session, self.handle = session, handle
        self.tools, self.sink, self.services = tools, sink, services
        self.guard, self.journal = guard, journal
        self.sub_agents = sub_agents  # `delegate` calls' (built by the call: agent/subagent.py)
        self._approved: dict[str, str] = {}  # call id -> why it was allowed (for the run report)
        self._cancelled: set[str] = set()  # calls the user stopped (`tool_call/cancel`)
        self._told = 0  # MCP servers' questions shown as notices this turn (a client without forms)

    async def run_calls(self, calls: list[PendingCall]) -> list[ToolTiming]:
        """Run a step's calls in order; each outcome goes to the journal as it finishes."""
        timings: list[ToolTiming] = []
        batch: list[PendingCall] = []

        async def run_batch() -> None:
            results: list[ToolTiming | None] = [None] * len(batch)

            async def run_one(i: int, call: PendingCall) -> None:
                results[i] = await self.run_call(call)

            async with anyio.create_task_group() as group:
                for i, call in enumerate(batch):
                    group.start_soon(run_one, i, call)
            timings.extend(t for t in results if t is not None)
            batch.clear()

        for call in calls:
            tool = self.tools.get(call.name)
            if tool is None or tool.reads_only(call.arguments):
                batch.append(call)
                continue
            if batch:
                await run_batch()
            timings.append(await self.run_call(call))
        if batch:
            await run_batch()
        return timings

    async def run_call(self, call: PendingCall) -> ToolTiming:
        tool = self.tools.get(call.name)
        ledger = self.session.ledger
        before = ledger.snapshot() if ledger is not None and tool is not None and not call.parse_error else {}
        t0 = time.perf_counter()
        result = await self._invoke(call, tool)
        latency = (time.perf_counter() - t0) * 1000
        if tool is not None:
            shown = screened(result, call.name, self.guard, self.services.mask_secrets, self.sink.emit)
            result = await self.services.hooks.after_tool(call, tool, shown)
        cancelled = call.call_id in self._cancelled
        self._cancelled.discard(call.call_id)
        self.sink.emit(
            ToolCallPatch(
                call.call_id,
                status="failed" if result.is_error else "completed",
                content=(TextContent(result.text), *(BlockContent(b) for b in result.blocks)),
                locations=tuple(result.locations) or None,
                cancelled=cancelled,
                cancellable=False if tool is not None and tool.cancellable else None,
            )
        )
        outcome = CallOutcome(call, result, latency_ms=latency)
        if tool is not None and call.arguments is not None:
            outcome.title, outcome.kind = safe_title(tool, call.arguments), tool.kind
        if tool is not None and ledger is not None:
            after = ledger.snapshot()
            learned: dict[str, str | None] = {k: v for k, v in after.items() if before.get(k) != v}
            learned.update({k: None for k in before if k not in after})
            outcome.ledger = ledger.stored_form(learned) if learned else None
        self.journal.record(outcome)
        return ToolTiming(
            call.call_id,
            call.name,
            call.arguments or {},
            len(result.text.encode("utf-8")),
            latency,
            result.text if result.is_error else None,
            self._approved.pop(call.call_id, None),
        )

    def refuse_started(self, call: PendingCall) -> None:
        """A resumed call that was approved and had started when its daemon stopped."""
        text = (
            "not run again: it was approved and had started when Tether stopped, so it "
            "may have run (check what it does before running it again)"
        )
        self.sink.emit(failed(call.call_id, text))
        self.journal.record(self._refused(call, text))

    def reannounce(self, calls: list[PendingCall]) -> None:
        """The replay of a resumed turn showed these calls: they are pending again."""
        for call in calls:
            tool = self.tools.get(call.name)
            self.sink.emit(
                ToolCallPatch(
                    call.call_id,
                    status="pending",
                    raw_input=call.arguments,
                    title=safe_title(tool, call.arguments or {}) if tool else call.name,
                    kind=tool.kind if tool else "other",
                )
            )

    def _refused(self, call: PendingCall, text: str) -> CallOutcome:
        tool = self.tools.get(call.name)
        outcome = CallOutcome(call, ToolResult(text, is_error=True))
        if tool is not None and call.arguments is not None:
            outcome.title, outcome.kind = safe_title(tool, call.arguments), tool.kind
        return outcome

    async def _invoke(self, call: PendingCall, tool: Tool[Any] | None) -> ToolResult:
        if tool is None or call.parse_error:
            self.sink.emit(ToolCallPatch(call.call_id, status="in_progress"))
            if tool is None:
                known = ", ".join(self.tools.names())
                return ToolResult(f"unknown tool {call.name!r}; available tools: {known}", is_error=True)
            return ToolResult(
                f"{call.name}: {call.parse_error}; send a JSON object matching the tool's schema", is_error=True
            )
        ctx = self._context(call, tool)
        try:
            pre = await self.services.hooks.before_tool(call, tool, validate_args(tool, call.arguments or {}))
            refused = pre.reason if pre.decision == "deny" else None
            reads = tool.reads_only(call.arguments)
            if reads and refused is None and self.services.gate is not None:  # a deny rule beats readOnlyHint
                refused = await self.services.gate.read_refusal(tool.name)
            if reads and pre.decision == "ask":
                asker = CheckpointingAsker(self.services.asker, self.journal)
                refused = await ask_for_read(
                    asker, approval_request(self.session, call, tool, pre.args, [], None), pre.reason
                )
            if refused is not None:
                return ToolResult(refused, is_error=True)
            if reads:
                self.sink.emit(ToolCallPatch(call.call_id, status="in_progress", cancellable=tool.cancellable or None))
                result = await self._run_tool(call, tool, pre.args, ctx)
            else:
                result = await self._run_approved(call, tool, ctx, pre)
        except ToolError as exc:
            result = ToolResult(str(exc), is_error=True)
        except StorageFault:
            raise  # the history cannot be written: the turn ends with -32015, not the call
        except Exception as exc:  # a tool bug must not end the turn
            log.exception("tool %s failed", call.name)
            result = ToolResult(f"{call.name} failed unexpectedly: {type(exc).__name__}: {exc}", is_error=True)
        result = ctx.recorder.attach(result) if ctx.recorder is not None else result  # changes it made
        if result.plan is not None and not result.is_error:
            self.sink.emit(plan_of(result.plan))
        return result

    def _context(self, call: PendingCall, tool: Tool[Any]) -> ToolContext:
        services, sink = self.services, self.sink
        if services.terminal_output_meta and tool.kind == "execute":
            on_output = TerminalStream(sink, call.call_id).add
        else:
            on_output = OutputTail(sink, call.call_id).add
        return ToolContext(
            sandbox=self.session.sandbox,
            call_id=call.call_id,
            documents=services.documents,
            files=services.files,
            reads=self.session.ledger,
            on_output=on_output,
            env_allow=services.env_allow,
            sandbox_setting=services.sandbox_setting,  # grep's rg runs in it too
            hidden_paths=services.hidden_paths,
            filtered_paths=services.filtered_paths,
            unix_sockets=services.unix_sockets,
            sub_agents=self.sub_agents,
            on_notice=lambda text: sink.emit(Notice(f"\n[{text}]\n")),
            elicit=self._elicit,
            recorder=None
            if tool.reads_only(call.arguments)
            else ChangeRecorder(
                self.session.sandbox, self.session.known_files, services.checkpoint_max_bytes, call.call_id
            ),
        )

    async def _elicit(self, server: str, message: str, schema: JsonObject) -> JsonObject:
        """An MCP server's form (checked): the client's relay asks the user; a client that
        cannot answer forms is shown the question as the server's, and the server is declined."""
        if self.services.elicit is not None:
            return await self.services.elicit(server, message, schema)
        from ..tools.visible_text import visible

        # declined at once, a server could ask again and again: a few are shown a turn, not a flood
        self._told += 1
        if self._told <= _TOLD_A_TURN:
            # each line of the server's after its first is quoted: none can pass for a notice of Tether's
            asked = visible(message).replace("\n", "\n> ")
            self.sink.emit(
                Notice(f"\n[MCP server `{server}` asked: {asked}\n(declined: this client cannot answer forms)]\n")
            )
        elif self._told == _TOLD_A_TURN + 1:
            self.sink.emit(Notice(f"\n[MCP server `{server}` asked again: declined, no longer shown this turn]\n"))
        return {"action": "decline"}

    # ---- calls that change things --------------------------------------------------

    async def _run_approved(self, call: PendingCall, tool: Tool[Any], ctx: ToolContext, pre: PreTool) -> ToolResult:
        """Preview, ask the gate (with what the `pre_tool` hooks said), then apply or run —
        or tell the model why not."""
        args = pre.args
        confined = await self._command_sandbox() if tool.kind == "execute" else None
        refusal = self._read_only_refusal(tool, confined)
        if refusal is not None:
            return refusal
        previews = await tool.preview(args, ctx) if isinstance(tool, MutatingTool) else []
        if previews:
            self.sink.emit(ToolCallPatch(call.call_id, content=tuple(ChangeContent(p) for p in previews)))
        if confined is not None:
            ctx.command_sandbox = confined
        request = approval_request(self.session, call, tool, args, previews, confined)
        request.hook_decision, request.hook_reason = pre.decision, pre.reason
        verdict = await self._decide(request)
        if verdict.cancelled:
            self.handle.cancel()
            await anyio.lowlevel.checkpoint()  # the cancel lands here
        if not verdict.allowed:
            return ToolResult(verdict.reason, is_error=True)
        ctx.network, rules = verdict.network, self.services.net_rules
        ctx.net_rules = (
            rules.per_call(self.services.gate, request) if rules and not (verdict.network or verdict.offline) else None
        )
        ctx.workspace_writable, ctx.guard_autoruns = self.session.mode != "read-only", verdict.guard_autoruns
        await self.journal.mark_started(call.call_id)
        terminal = self._started(call, tool, args, verdict)
        if isinstance(tool, MutatingTool):
            result = await tool.apply(args, ctx, previews, verdict.accepted_hunks)
            if not result.is_error:
                result.changes = list(previews)
            return result
        result = await self._run_tool(call, tool, args, ctx, terminal)
        if terminal is not None:
            run = result.command
            self.sink.emit(
                TerminalExited(
                    call.call_id,
                    terminal.terminal_id,
                    exit_code=run.exit_code if run else None,
                    signal=run.signal if run else None,
                )
            )
        return result

    async def _run_tool(
        self,
        call: PendingCall,
        tool: Tool[Any],
        args: object,
        ctx: ToolContext,
        terminal: TerminalStarted | None = None,
    ) -> ToolResult:
        """Run the tool; a call that may be stopped alone runs in its own cancel scope."""
        calls = self.session.calls
        if not tool.cancellable:
            calls.ended(call.call_id, "it cannot be stopped alone (only session/cancel stops the turn)")
            return await tool.run(args, ctx)
        result: ToolResult | None = None
        with calls.running(call.call_id, self.handle, terminal) as running:
            result = await tool.run(args, ctx)
        if not running.cancelled and result is not None:
            return result
        self._cancelled.add(call.call_id)
        return running.told(result)

    def _read_only_refusal(self, tool: Tool[Any], confined: SandboxChoice | None) -> ToolResult | None:
        """In read-only mode a command may run in a read-only sandbox (asked as in ask
        mode); anything else is refused before anything is read or shown."""
        if self.session.mode != "read-only" or (confined is not None and confined.sandboxed):
            return None
        why = f" and no OS sandbox can keep it read-only here ({confined.reason})" if confined else ""
        return ToolResult(
            f"not allowed in read-only mode: {tool.name} changes things{why}; the user can "
            f"switch the session to ask, auto-edit or full-auto",
            is_error=True,
        )

    async def _decide(self, request: ApprovalRequest) -> Verdict:
        gate = self.services.gate
        if gate is None:
            return Verdict(False, "no approval gate is configured; nothing that changes files runs")
        return await gate.decide(request, CheckpointingAsker(self.services.asker, self.journal))

    def _started(self, call: PendingCall, tool: Tool[Any], args: object, verdict: Verdict) -> TerminalStarted | None:
        """The call is approved and starts: the client sees why, and the terminal its
        output goes to (a command, when the client shows terminals)."""
        self._approved[call.call_id] = verdict.reason
        if not (self.services.terminal_output_meta and tool.kind == "execute"):
            self.sink.emit(
                ToolCallPatch(
                    call.call_id, status="in_progress", approved_by=verdict.reason, cancellable=tool.cancellable or None
                )
            )
            return None
        cwd = str(self.session.sandbox.resolve(str(getattr(args, "cwd", None) or ".")))
        command = str(getattr(args, "command", "") or "")
        started = TerminalStarted(call.call_id, command, cwd, cancellable=tool.cancellable)
        self.sink.emit(started)
        self.sink.emit(
            ToolCallPatch(
                call.call_id,
                status="in_progress",
                content=(TerminalContent(call.call_id),),
                approved_by=verdict.reason,
                terminal=TerminalInfo(call.call_id, cwd),
                cancellable=tool.cancellable or None,
            )
        )
        return started

    async def _command_sandbox(self) -> SandboxChoice:
        """The OS sandbox commands run in (probed once per process, off the event loop);
        the first command of a session without one tells the user why."""
        from ..sandbox import choose_sandbox

        choice = await anyio.to_thread.run_sync(choose_sandbox, self.services.sandbox_setting)
        if not choice.sandboxed and not self.session.told_unsandboxed:
            self.session.told_unsandboxed = True
            self.sink.emit(
                Notice(
                    f"\n[commands run without an OS sandbox: {choice.reason}. Each command asks for "
                    f"approval, whatever the mode or rules; `tether doctor` shows the sandbox state]\n"
                )
            )
        return choice
