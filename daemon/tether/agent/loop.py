"""One turn of the agent loop (seeds 004 and 003).

persist the user message -> up to `max_steps` model steps: stream text, thinking and
tool-call deltas to the sink; run the step's tool calls (read-only ones concurrently,
results in call order); commit the step -> stop when the model calls no tools, at
`max_steps`, or on cancel.

Commits happen at step boundaries only (one transaction each), so a crash loses at most
the step in flight and the streaming path never touches the database. A tool error goes
back to the model as an error result; it never ends the turn. Cancel ends the stream and
the running tools at once, commits what was produced marked `cancelled`, and the turn
answers `cancelled` whenever a cancel arrived before it answered.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import attrs

from tether_protocol.conversation import Message, ToolResultMessage, message_from_json, messages_from_json

from ..providers.base import (
    Finish,
    Provider,
    ProviderError,
    TextDelta,
    ThinkingDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageReport,
)
from ..store import MessageRecord, StorageFault
from ..approvals import ApprovalGate, ApprovalRequest, Asker, Verdict
from ..tools.base import ChangePreview, FileIO, MutatingTool, ToolContext, ToolError, ToolResult, validate_args
from ..tools.registry import ToolRegistry
from ..tools.update_plan import plan_entries
from .compaction import compact, should_compact, worth_compacting
from .context import build_request, project_instructions
from .guard import InputGuard, truncate_user_blocks, wrap_tool_result
from .history import MISSING, prepare
from .sanitize import StreamSanitizer
from .tokens import ContextEstimate
from .report import RunReportBuilder, ToolTiming
from .session import ActiveTurn, AgentSession
from .sink import TurnSink
from .state import PendingCall, StepState

log = logging.getLogger("tether.agent")

_FINISH_TO_STOP = {
    "stop": "end_turn",
    "end_turn": "end_turn",
    "length": "max_tokens",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
    "content_filter": "refusal",
}
TITLE_CHARS = 60
# How often the streamed output of the step in flight is saved (one clock read per event).
_PARTIAL_EVERY_S = 0.5
# Message statuses the model sees again on later steps: what it said before a cancel
# stays part of the conversation; broken and failed output does not.
MODEL_VISIBLE = frozenset({"complete", "cancelled", "interrupted"})
_ASSISTANT = "\0assistant"  # marks "the open step's assistant message is committed"


@dataclass(slots=True)
class TurnServices:
    """What tools that change things need from the server; defaults suit read-only turns."""

    gate: ApprovalGate | None = None
    asker: Asker | None = None
    files: FileIO | None = None
    documents: Mapping[str, str] = field(default_factory=dict)
    env_allow: tuple[str, ...] = ()
    # The OS sandbox for commands (settings.sandbox: auto | bwrap | landlock | off) and
    # the directories it hides from them (Tether's config and history).
    sandbox_setting: str = "auto"
    hidden_paths: tuple[str, ...] = ()
    # The client set `_meta.terminal_output`: command output goes as terminal_info /
    # terminal_output / terminal_exit `_meta` on the tool call (as claude-agent-acp and
    # codex-acp do) instead of text content.
    terminal_output_meta: bool = False


class _TerminalMeta:
    """Command output as ACP `_meta.terminal_output` deltas (appended by the client)."""

    __slots__ = ("sink", "call_id")

    def __init__(self, sink: TurnSink, call_id: str) -> None:
        self.sink, self.call_id = sink, call_id

    def add(self, text: str) -> None:
        self.sink.tool_call_update(
            self.call_id, meta={"terminal_output": {"terminal_id": self.call_id, "data": text}}
        )


# Streamed command output shown while it runs: the last this-many characters.
_LIVE_OUTPUT_CHARS = 64 * 1024


class _OutputTail:
    """Streams a running command's output as tool_call_update content (the tail of it:
    each update replaces the previous content, so sending everything would be O(n^2))."""

    __slots__ = ("sink", "call_id", "parts", "size", "dropped")

    def __init__(self, sink: TurnSink, call_id: str) -> None:
        self.sink, self.call_id = sink, call_id
        self.parts: list[str] = []
        self.size = 0
        self.dropped = 0

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.size > 2 * _LIVE_OUTPUT_CHARS:
            joined = "".join(self.parts)
            self.dropped += len(joined) - _LIVE_OUTPUT_CHARS
            self.parts, self.size = [joined[-_LIVE_OUTPUT_CHARS:]], _LIVE_OUTPUT_CHARS
        shown = "".join(self.parts)[-_LIVE_OUTPUT_CHARS:]
        if self.dropped:
            shown = f"[... {self.dropped} earlier characters not shown ...]\n" + shown
        self.sink.tool_call_update(self.call_id, content_text=shown)


class _CheckpointingAsker:
    """Commits the turn's state right before the user is asked (the suspension point)."""

    def __init__(self, inner: Asker | None, turn: AgentTurn) -> None:
        self.inner, self.turn = inner, turn

    async def ask(self, request: ApprovalRequest, reason: str) -> Any:
        from ..approvals import AskerAnswer

        if self.inner is None:
            return AskerAnswer("unavailable", detail="no way to ask the user was configured")
        await self.turn.checkpoint()
        return await self.inner.ask(request, reason)


def diff_blocks(previews: list[ChangePreview]) -> list[dict[str, Any]]:
    """ACP `diff` content for the changes a tool would make."""
    blocks: list[dict[str, Any]] = []
    for p in previews:
        if p.old_text is None and p.new_text is None:
            # a directory, link or binary file: no text to diff, say what happens
            what = f"move to {p.move_to}" if p.move_to else "delete"
            blocks.append({"type": "content", "content": {"type": "text", "text": f"{what}: {p.path}\n{p.unified_diff}"}})
            continue
        block: dict[str, Any] = {"type": "diff", "path": p.move_to or p.path, "newText": p.new_text or ""}
        if p.old_text is not None:
            block["oldText"] = p.old_text
        blocks.append(block)
    return blocks


@dataclass(slots=True)
class TurnOutcome:
    stop_reason: str  # ACP StopReason, or "error"
    turn_id: str
    error: ProviderError | None = None


class AgentTurn:
    def __init__(
        self,
        session: AgentSession,
        handle: ActiveTurn,
        *,
        provider: Provider,
        tools: ToolRegistry,
        sink: TurnSink,
        max_steps: int,
        max_output_tokens: int = 0,
        services: TurnServices | None = None,
        keep_user_turns: int = 50,
        guard_mode: str = "warn",
    ) -> None:
        self.session = session
        self.handle = handle
        self.provider = provider
        self.tools = tools
        self.sink = sink
        self.max_steps = max_steps
        self.max_output_tokens = max_output_tokens
        self.services = services or TurnServices()
        self.report = RunReportBuilder(handle.turn_id, session.id, provider.name, provider.model)
        # The step in flight and the tool results it has so far: what a cancel commits.
        self._open_step: StepState | None = None
        self._open_results: dict[str, dict[str, Any]] = {}
        # Calls of the open step whose results a checkpoint already committed.
        self._committed_calls: set[str] = set()
        # Calls of a checkpointed step that were approved and started changing things.
        self._started: set[str] = set()
        self._retried_step = False
        self._compacted_for_error = False
        self._partial_saved = False
        self.keep_user_turns = keep_user_turns
        self.guard = InputGuard(guard_mode)  # type: ignore[arg-type]
        # read once per turn (not per step): the system prompt stays byte-identical
        self.instructions = project_instructions(session.workspace)

    async def run(self, prompt: list[dict[str, Any]]) -> TurnOutcome:
        session, store = self.session, self.session.store
        prompt, notices, verdict = self._screen_prompt(prompt)
        user: dict[str, Any] = {"role": "user", "content": prompt}
        if verdict is not None and verdict.findings:
            user["guard"] = {
                "findings": [{"pattern": f.pattern, "excerpt": f.excerpt} for f in verdict.findings],
                "blocked": verdict.blocked,
            }
        blocked = verdict is not None and verdict.blocked
        await store.begin_turn(
            session.id,
            self.handle.turn_id,
            # a blocked prompt is kept in the history but never sent to the model
            MessageRecord(role="user", body=user, status="error" if blocked else "complete"),
        )
        if not blocked:
            session.messages.append(message_from_json(user))  # [model] typed at the boundary
        for notice in notices:
            text = notice if notice.startswith("[") else f"[{notice}]"
            self.sink.notice(f"\n{text}\n")
        if blocked:
            async def refused() -> str:
                return "refusal"

            return await self._drive(refused)
        if session.title is None:
            title = _title_from(prompt)
            if title:
                session.title = title
                await store.update_session(session.id, title=title)
                self.sink.title(title)
        return await self._drive(self._steps)

    def _screen_prompt(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str], Any]:
        """Over-long text is cut (never refused); the input guard looks at the rest."""
        prompt, cut = truncate_user_blocks(prompt)
        notices: list[str] = [cut] if cut else []
        screened = []
        attached: list[Any] = []  # findings in attached files' text
        for block in prompt:
            resource = block.get("resource")
            if block.get("type") == "resource" and isinstance(resource, dict) and isinstance(resource.get("text"), str):
                checked = self.guard.check_attachment(resource["text"], str(resource.get("uri", "")))
                attached += checked.findings
                if checked.notice:
                    notices.append(checked.notice)
                if checked.blocked:
                    block = {**block, "resource": {**resource, "text": checked.text}}
            screened.append(block)
        joined = "\n".join(b.get("text", "") for b in screened if b.get("type") == "text")
        verdict = self.guard.check_user(joined)
        if verdict.notice:
            notices.append(verdict.notice)
        verdict.findings += attached  # recorded with the message
        return screened, notices, verdict

    async def resume(self, pending: dict[str, Any]) -> TurnOutcome:
        """Continue a turn a previous daemon left waiting for approval (seed 004's
        checkpoint at the suspension point): run the step's remaining tool calls (asking
        again), then the following steps. Finished steps are not sent to the model again."""
        index = int(pending.get("step", 1))
        calls = [
            PendingCall(c["id"], c["name"], arguments=c.get("arguments") or {}, ended=True)
            for c in pending.get("calls", [])
        ]
        # The view read back from the store paired each waiting call with a "result
        # missing" stand-in; its real result comes now (else the stand-in would stay, and
        # the real result be dropped as a second answer to the call).
        waiting = {c.call_id for c in calls}
        kept = [
            m for m in self.session.messages
            if not (isinstance(m, ToolResultMessage) and m.tool_call_id in waiting and m.content == MISSING)
        ]
        if len(kept) != len(self.session.messages):
            self.session.messages = kept
            self.session.view_size = ContextEstimate()  # it counted the stand-ins

        async def steps() -> str:
            state = StepState(index)
            state.calls = {c.call_id: c for c in calls}
            self._open_step, self._open_results = state, {}
            self._committed_calls = {_ASSISTANT}  # the previous daemon committed it
            for call in calls:  # the replay already showed these calls: update them
                tool = self.tools.get(call.name)
                self.sink.tool_call_update(
                    call.call_id, title=_safe_title(tool, call.arguments or {}) if tool else call.name,
                    kind=tool.kind if tool else "other", status="pending", raw_input=call.arguments,
                )
            started = {c["id"] for c in pending.get("calls", []) if c.get("started")}
            for call in calls:
                if call.call_id in started:  # it may have run: never twice unasked
                    text = (
                        "not run again: it was approved and had started when Tether stopped, so it "
                        "may have run (check what it does before running it again)"
                    )
                    self.sink.tool_call_update(call.call_id, status="failed", content_text=text)
                    self._open_results[call.call_id] = _tool_message(
                        call, self.tools.get(call.name), ToolResult(text, is_error=True), []
                    )
            timings = await self._run_tools([c for c in calls if c.call_id not in started])
            self.report.add_step(state, timings, sum(t.latency_ms for t in timings))
            await self._commit([self._open_results[c.call_id] for c in calls], clear_pending=True)
            if index >= self.max_steps:
                return "max_turn_requests"
            return await self._steps(start=index + 1)

        return await self._drive(steps)

    async def _drive(self, steps: Any) -> TurnOutcome:
        store = self.session.store
        stop_reason, status, error = "end_turn", "complete", None
        try:
            with anyio.CancelScope() as scope:
                self.handle.scope = scope
                if self.handle.cancel_requested:
                    scope.cancel()
                stop_reason = await steps()
        except ProviderError as exc:
            stop_reason, status, error = "error", "error", exc
        finally:
            self.handle.scope = None
            with anyio.CancelScope(shield=True):
                if self.handle.cancel_requested and status != "error":
                    stop_reason, status = "cancelled", "cancelled"
                await self._commit_open_step(status)
                self.sink.flush()
                report = self.report.build(
                    stop_reason=stop_reason, status=status, error=str(error) if error else None
                )
                await store.finish_turn(
                    self.handle.turn_id,
                    status,
                    None if status == "error" else stop_reason,
                    error=str(error) if error else None,
                    report=report,
                )
        return TurnOutcome(stop_reason, self.handle.turn_id, error)

    # ---- steps ---------------------------------------------------------------------

    async def _steps(self, start: int = 1) -> str:
        tool_specs = self.tools.specs()
        for index in range(start, self.max_steps + 1):
            state = await self._stream_with_recovery(index, tool_specs)
            calls = state.finish_calls()
            if not calls:
                self.report.add_step(state, [], 0.0)
                await self._commit([state.assistant_message()])
                self._report_usage(state)
                return _FINISH_TO_STOP.get(state.finish_reason or "stop", "end_turn")
            t0 = time.perf_counter()
            timings = await self._run_tools(calls)
            tool_ms = (time.perf_counter() - t0) * 1000
            self.report.add_step(state, timings, tool_ms)
            if self._committed_calls:
                # a checkpoint already committed the assistant message and some results
                rest = [self._open_results[c.call_id] for c in calls if c.call_id not in self._committed_calls]
                await self._commit(rest, clear_pending=True)
            else:
                results = [self._open_results[c.call_id] for c in calls]
                await self._commit([state.assistant_message(), *results])
            self._report_usage(state, covered=len(self.session.messages) - len(calls))
        return "max_turn_requests"

    def _report_usage(self, state: StepState, covered: int | None = None) -> None:
        """`usage_update` after each step: how full the context is, against the window."""
        messages = self.session.messages
        context = self.session.context
        context.anchor(state.input_tokens, state.output_tokens, len(messages) if covered is None else covered)
        self.sink.usage(context.used(messages), self.provider.context_window)

    async def _stream_with_recovery(self, index: int, tool_specs: list[dict[str, Any]]) -> StepState:
        """Stream one step; if the stream breaks after output was shown, retry it once.

        The provider already retried failures that happened before any output. A break
        after output is not replayed silently: what the client saw is kept in history
        marked `incomplete` (out of the model's view), the client is told, and the step
        is streamed again — once per turn, and only before any of its tools ran (tools
        run after the stream, so none has).
        """
        while True:
            state = StepState(index)
            self._open_step, self._open_results = state, {}
            self._committed_calls, self._started = set(), set()
            try:
                await self._stream_step(state, tool_specs)
                return state
            except ProviderError as exc:
                shown = bool(state.text_parts or state.thinking_parts or state.calls)
                if exc.kind == "context_length" and not shown and not self._compacted_for_error:
                    # the provider says the conversation is too long: compact, retry once
                    self._compacted_for_error = True
                    await self._compact(reason="the model said the conversation is too long")
                    continue
                if not shown or self._retried_step:
                    raise
                self._retried_step = True
                await self._set_aside_broken_step(state, exc)

    async def _set_aside_broken_step(self, state: StepState, exc: ProviderError) -> None:
        for call in state.calls.values():
            self.sink.tool_call_update(
                call.call_id, status="failed", content_text="not run: the model's reply broke off"
            )
        partial: dict[str, Any] = {"role": "assistant", "text": state.text}
        if state.thinking_parts:
            partial["thinking"] = state.thinking
        await self._commit([partial], status="incomplete")
        self.sink.notice(
            f"\n\n[the model's reply broke off: {exc}. Retrying this step once.]\n\n"
        )

    async def _stream_step(self, state: StepState, tool_specs: list[dict[str, Any]]) -> None:
        session = self.session
        await self._compact_if_needed()
        window = self.provider.context_window
        messages = prepare(
            session.messages,
            context_window=window,
            used_tokens=session.view_size.used(session.messages),
            keep_user_turns=self.keep_user_turns,
        )
        request = build_request(
            messages=[_wrapped(m) for m in messages],
            tools=tool_specs,
            workspace=session.workspace,
            model=self.provider.model,
            max_output_tokens=self.max_output_tokens,
            session_id=session.id,
            step=state.index,
            instructions=self.instructions,
        )
        sink = self.sink
        text_parts = state.text_parts
        state.started = time.perf_counter()
        next_save = state.started + _PARTIAL_EVERY_S
        clock = time.perf_counter
        sanitizer = StreamSanitizer()  # the 7 output steps, without holding back prose
        feed = sanitizer.feed
        async with contextlib.aclosing(self.provider.stream(request)) as stream:
            async for event in stream:
                if clock() >= next_save:
                    # a time-based checkpoint (not per event): a killed daemon keeps this
                    await self._save_partial(state)
                    next_save = time.perf_counter() + _PARTIAL_EVERY_S
                kind = type(event)
                if kind is TextDelta:
                    if state.first_token is None:
                        state.first_token = time.perf_counter()
                    text, thought = feed(event.text)
                    if thought:  # first: in one piece, a closing think tag precedes the answer
                        state.add_thinking(thought, None, None)
                        sink.thought(thought)
                    if text:
                        text_parts.append(text)
                        sink.text(text)
                elif kind is ThinkingDelta:
                    state.add_thinking(event.text, event.signature, event.redacted)
                    if event.text:
                        if state.first_token is None:
                            state.first_token = time.perf_counter()
                        sink.thought(event.text)
                elif kind is ToolCallStart:
                    self._call_started(state, event)
                elif kind is ToolCallArgsDelta:
                    call = state.calls.get(event.call_id)
                    if call is not None:
                        call.arg_parts.append(event.delta)
                elif kind is ToolCallEnd:
                    call = state.calls.get(event.call_id)
                    if call is not None:
                        self._call_ended(call)
                elif kind is UsageReport:
                    state.input_tokens = event.input_tokens
                    state.output_tokens = event.output_tokens
                    state.cached_tokens = event.cached_tokens
                    state.cache_write_tokens = event.cache_write_tokens
                elif kind is Finish:
                    state.finish_reason = event.reason
        text, thought = sanitizer.finish()
        if thought:
            state.add_thinking(thought, None, None)
            sink.thought(thought)
        if text:
            text_parts.append(text)
            sink.text(text)
        state.llm_done = time.perf_counter()

    async def _compact_if_needed(self) -> None:
        session = self.session
        window = self.provider.context_window
        if should_compact(session.view_size.used(session.messages), window) and worth_compacting(
            session.messages, window
        ):
            await self._compact(reason="the conversation passed 75% of the context window")

    async def _compact(self, *, reason: str) -> None:
        """Summarise all but the last messages (seed 003); the summary replaces them in the
        model's view. The stored history keeps everything; the client is told."""
        session = self.session
        view, summary = await compact(self.provider, session.messages)
        replaced = summary.replaced
        await session.store.append_messages(
            session.id, self.handle.turn_id, [MessageRecord(role="user", body=summary)]
        )
        session.messages = view
        session.context = ContextEstimate()
        session.view_size = ContextEstimate()
        self.sink.update(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": f"\n\n[{replaced} earlier messages were summarised to save context: {reason}]\n\n"},
                "_meta": {"tether": {"notice": True, "compaction": {"replaced": replaced}}},
            }
        )

    async def _save_partial(self, state: StepState) -> None:
        partial: dict[str, Any] = {"role": "assistant", "text": state.text}
        if state.thinking_parts:
            partial["thinking"] = state.thinking
        self._partial_saved = True
        await self.session.store.save_partial(self.handle.turn_id, partial)

    def _call_started(self, state: StepState, event: ToolCallStart) -> None:
        state.calls[event.call_id] = PendingCall(event.call_id, event.name)
        tool = self.tools.get(event.name)
        self.sink.tool_call(
            event.call_id,
            title=event.name,
            kind=tool.kind if tool else "other",
            status="pending",
        )

    def _call_ended(self, call: PendingCall) -> None:
        call.finish()
        tool = self.tools.get(call.name)
        if tool is None or call.arguments is None:
            return
        locations = _locations(tool, call.arguments, self.session)
        self.sink.tool_call_update(
            call.call_id,
            title=_safe_title(tool, call.arguments),
            raw_input=call.arguments,
            locations=locations or None,
        )

    # ---- tools ---------------------------------------------------------------------

    async def _run_tools(self, calls: list[PendingCall]) -> list[ToolTiming]:
        """Run a step's calls in order: consecutive read-only calls together, each call
        that changes something alone, after its approval (so a read after an edit in the
        same step sees the edit, and prompts come one at a time, in order)."""
        timings: list[ToolTiming] = []
        batch: list[PendingCall] = []

        async def run_batch() -> None:
            results: list[ToolTiming | None] = [None] * len(batch)

            async def run_one(i: int, call: PendingCall) -> None:
                results[i] = await self._run_tool(call)

            async with anyio.create_task_group() as group:
                for i, call in enumerate(batch):
                    group.start_soon(run_one, i, call)
            timings.extend(t for t in results if t is not None)
            batch.clear()

        for call in calls:
            tool = self.tools.get(call.name)
            if tool is None or tool.read_only:
                batch.append(call)
                continue
            if batch:
                await run_batch()
            timings.append(await self._run_tool(call))
        if batch:
            await run_batch()
        return timings

    def _context(self, call: PendingCall) -> ToolContext:
        services = self.services
        output: _OutputTail | _TerminalMeta
        if services.terminal_output_meta and call.name == "run_command":
            output = _TerminalMeta(self.sink, call.call_id)
        else:
            output = _OutputTail(self.sink, call.call_id)
        return ToolContext(
            sandbox=self.session.sandbox,
            call_id=call.call_id,
            documents=services.documents,
            files=services.files,
            reads=self.session.ledger,
            on_output=output.add,
            env_allow=services.env_allow,
            hidden_paths=services.hidden_paths,
        )

    async def _run_tool(self, call: PendingCall) -> ToolTiming:
        tool = self.tools.get(call.name)
        t0 = time.perf_counter()
        ledger_before: dict[str, str] = {}
        if tool is None:
            self.sink.tool_call_update(call.call_id, status="in_progress")
            result = ToolResult(
                f"unknown tool {call.name!r}; available tools: {', '.join(self.tools.names())}",
                is_error=True,
            )
        elif call.parse_error:
            self.sink.tool_call_update(call.call_id, status="in_progress")
            result = ToolResult(
                f"{call.name}: {call.parse_error}; send a JSON object matching the tool's schema",
                is_error=True,
            )
        else:
            ledger_before = self.session.ledger.snapshot() if self.session.ledger else {}
            try:
                args = validate_args(tool, call.arguments or {})
                ctx = self._context(call)
                if tool.read_only:
                    self.sink.tool_call_update(call.call_id, status="in_progress")
                    result = await tool.run(args, ctx)
                else:
                    result = await self._run_with_approval(call, tool, args, ctx)
            except ToolError as exc:
                result = ToolResult(str(exc), is_error=True)
            except StorageFault:
                raise  # the history cannot be written: the turn ends with -32015, not the call
            except Exception as exc:  # a tool bug must not end the turn
                log.exception("tool %s failed", call.name)
                result = ToolResult(
                    f"{call.name} failed unexpectedly: {type(exc).__name__}: {exc}", is_error=True
                )
            if call.name == "update_plan" and not result.is_error:
                self.sink.plan(plan_entries(call.arguments or {}))
        latency = (time.perf_counter() - t0) * 1000
        if tool is not None:
            # tool output is untrusted: files and command output (a failing one's too)
            # can carry injections
            checked = self.guard.check_tool_result(result.text, call.name)
            if checked.notice:
                note = checked.notice if checked.notice.startswith("[") else f"[{checked.notice}]"
                self.sink.notice(f"\n{note}\n")
            if checked.blocked:
                result = ToolResult(checked.text, is_error=True, locations=result.locations)
        locations = [
            {"path": loc.path, **({"line": loc.line} if loc.line is not None else {})}
            for loc in result.locations
        ]
        self.sink.tool_call_update(
            call.call_id,
            status="failed" if result.is_error else "completed",
            content_text=result.text,
            locations=locations or None,
        )
        message = _tool_message(call, tool, result, locations)
        if tool is not None and self.session.ledger is not None:
            # What this call taught the read ledger is stored with its result, so a revived
            # session (a restarted daemon) knows what the model has read.
            after = self.session.ledger.snapshot()
            learned: dict[str, str | None] = {k: v for k, v in after.items() if ledger_before.get(k) != v}
            learned.update({k: None for k in ledger_before if k not in after})
            if learned:
                message["ledger"] = self.session.ledger.stored_form(learned)
        self._open_results[call.call_id] = message
        return ToolTiming(
            call.call_id,
            call.name,
            call.arguments or {},
            len(result.text.encode("utf-8")),
            latency,
            result.text if result.is_error else None,
        )

    async def _run_with_approval(
        self, call: PendingCall, tool: Any, args: dict[str, Any], ctx: ToolContext
    ) -> ToolResult:
        """Preview, ask the gate, then apply or run — or tell the model why not."""
        gate = self.services.gate
        confined = await self._command_sandbox() if tool.kind == "execute" else None
        if self.session.mode == "read-only":
            # A command may run in a read-only sandbox (asked like in ask mode); anything
            # else is refused before anything is read or shown.
            if confined is None or not confined.sandboxed:
                why = f" and no OS sandbox can keep it read-only here ({confined.reason})" if confined else ""
                return ToolResult(
                    f"not allowed in read-only mode: {tool.name} changes things{why}; the user can "
                    f"switch the session to ask, auto-edit or full-auto",
                    is_error=True,
                )
        previews = await tool.preview(args, ctx) if isinstance(tool, MutatingTool) else []
        if previews:
            self.sink.tool_call_update(call.call_id, content_blocks=diff_blocks(previews))
        sandbox = self.session.sandbox
        command = args.get("command") if tool.kind == "execute" else None
        if confined is not None:
            ctx.command_sandbox = confined
        request = ApprovalRequest(
            session_id=self.session.id,
            call_id=call.call_id,
            tool_name=tool.name,
            kind=tool.kind,
            title=_safe_title(tool, args),
            arguments=args,
            mode=self.session.mode,
            command=command if isinstance(command, str) else None,
            cwd=str(args.get("cwd") or "."),
            rel_paths=[sandbox.relative(Path(p.path)) for p in previews],
            previews=previews,
            # the gate never lets a rule or mode run an unsandboxed command unasked
            sandboxed=confined is not None and confined.sandboxed,
            sandbox_note="" if confined is None or confined.sandboxed else confined.reason,
        )
        if gate is None:
            verdict = Verdict(False, "no approval gate is configured; nothing that changes files runs")
        else:
            verdict = await gate.decide(request, _CheckpointingAsker(self.services.asker, self))
        if verdict.cancelled:
            self.handle.cancel()
            await anyio.lowlevel.checkpoint()  # the cancel lands here
        if not verdict.allowed:
            return ToolResult(verdict.reason, is_error=True)
        ctx.network = verdict.network
        ctx.workspace_writable = self.session.mode != "read-only"
        await self._mark_started(call)
        meta: dict[str, Any] = {"tether": {"approvedBy": verdict.reason}}
        terminal = self.services.terminal_output_meta and tool.kind == "execute"
        if terminal:
            cwd = str(self.session.sandbox.resolve(str(args.get("cwd") or ".")))
            meta["terminal_info"] = {"terminal_id": call.call_id, "cwd": cwd}
            self.sink.tool_call_update(
                call.call_id,
                status="in_progress",
                content_blocks=[{"type": "terminal", "terminalId": call.call_id}],
                meta=meta,
            )
        else:
            self.sink.tool_call_update(call.call_id, status="in_progress", meta=meta)
        if isinstance(tool, MutatingTool):
            return await tool.apply(args, ctx, previews, verdict.accepted_hunks)
        result = await tool.run(args, ctx)
        if terminal:
            code = re.search(r"exit code (\d+)", result.text.rsplit("\n", 1)[-1])
            self.sink.tool_call_update(
                call.call_id,
                meta={"terminal_exit": {
                    "terminal_id": call.call_id,
                    "exit_code": int(code.group(1)) if code else None,
                    "signal": None if code else "SIGKILL",
                }},
            )
        return result

    async def _command_sandbox(self) -> Any:
        """The OS sandbox commands run in (probed once per process, off the event loop);
        the first command of a session without one tells the user why."""
        from ..sandbox import choose_sandbox

        choice = await anyio.to_thread.run_sync(choose_sandbox, self.services.sandbox_setting)
        if not choice.sandboxed and not self.session.told_unsandboxed:
            self.session.told_unsandboxed = True
            self.sink.notice(
                f"\n[commands run without an OS sandbox: {choice.reason}. Each command asks for "
                f"approval, whatever the mode or rules; `tether doctor` shows the sandbox state]\n"
            )
        return choice

    # ---- commits -------------------------------------------------------------------

    async def _commit(
        self, bodies: list[dict[str, Any]], status: str = "complete", *, clear_pending: bool = False
    ) -> None:
        """Commit a step's messages; ``clear_pending``: and, in the same transaction, the
        checkpoint of its calls waiting for approval (they have all run now)."""
        # The step stops being "open" before the write: the store finishes a write even
        # when its caller is cancelled, so a cancel here must not commit the step twice.
        self._open_step = None
        self._committed_calls, self._started = set(), set()
        if status in MODEL_VISIBLE:
            self.session.messages.extend(messages_from_json(bodies))  # [model] typed at the boundary
        records = [MessageRecord(role=b["role"], body=b, status=status) for b in bodies]
        store = self.session.store
        if clear_pending:
            await store.commit_step(self.session.id, self.handle.turn_id, records, None)
            self._partial_saved = False  # cleared with it
        else:
            await store.append_messages(self.session.id, self.handle.turn_id, records)
        if self._partial_saved:
            self._partial_saved = False
            await store.save_partial(self.handle.turn_id, None)

    async def checkpoint(self) -> None:
        """Before waiting for the user: commit the step so far and what is left to run, so
        a new daemon can ask again and resume here if this one dies (restart-safe approvals)."""
        state = self._open_step
        if state is None:
            return
        calls = list(state.calls.values())
        bodies: list[dict[str, Any]] = []
        if _ASSISTANT not in self._committed_calls:
            bodies.append(state.assistant_message())
        done = [c for c in calls if c.call_id in self._open_results and c.call_id not in self._committed_calls]
        bodies += [self._open_results[c.call_id] for c in done]
        committed = {*self._committed_calls, _ASSISTANT, *(c.call_id for c in done)}
        pending = self._pending_record(state, committed)
        # Marked committed before the write, as in _commit: the store finishes a write even
        # when its caller is cancelled, so a cancel here must not commit them twice. The
        # step so far and what is left of it go in one transaction (the streamed partial
        # they supersede cleared with them).
        self.session.messages.extend(messages_from_json(bodies))  # [model] typed at the boundary
        self._committed_calls = committed
        self._partial_saved = False
        records = [MessageRecord(role=b["role"], body=b) for b in bodies]
        await self.session.store.commit_step(self.session.id, self.handle.turn_id, records, pending)

    def _pending_record(self, state: StepState, committed: set[str]) -> dict[str, Any]:
        """The checkpoint of a step's calls still to run: those whose results are not
        committed, a call that was approved and started marked ``started``."""
        return {
            "step": state.index,
            "calls": [
                {
                    "id": c.call_id,
                    "name": c.name,
                    "arguments": c.arguments or {},
                    **({"started": True} if c.call_id in self._started else {}),
                }
                for c in state.calls.values()
                if c.call_id not in committed
            ],
        }

    async def _mark_started(self, call: PendingCall) -> None:
        """An approved call of a checkpointed step is about to change things: record that,
        so a daemon that resumes the turn after a crash does not run it a second time."""
        state = self._open_step
        if state is None or _ASSISTANT not in self._committed_calls:
            return  # nothing recorded to resume: a crash interrupts the whole step
        self._started.add(call.call_id)
        await self.session.store.set_pending(self.handle.turn_id, self._pending_record(state, self._committed_calls))

    async def _commit_open_step(self, status: str) -> None:
        """Commit the step a cancel or error interrupted, keeping tool calls paired."""
        state = self._open_step
        self._open_step = None
        if state is None:
            return
        assistant = state.assistant_message()
        checkpointed = _ASSISTANT in self._committed_calls
        bodies = [] if checkpointed else [assistant]
        for call in assistant.get("tool_calls", []):
            if call["id"] in self._committed_calls:
                continue
            result = self._open_results.get(call["id"])
            if result is None:
                # The client saw this call start; close it so it does not stay in progress.
                self.sink.tool_call_update(
                    call["id"],
                    status="failed",
                    content_text=f"not run: the turn was {status} before this tool finished",
                )
                result = {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "name": call["name"],
                    "content": f"not run: the turn was {status} before this tool finished",
                    "is_error": True,
                }
            bodies.append(result)
        if checkpointed:
            self._committed_calls = set()
            await self._commit(bodies, status=status, clear_pending=True)
            return
        if not assistant["text"] and "tool_calls" not in assistant and "thinking" not in assistant:
            return
        await self._commit(bodies, status=status)


def _wrapped(message: Message) -> Message:
    """The model's copy of a tool result, marked as data (the stored one stays raw)."""
    if not isinstance(message, ToolResultMessage):
        return message
    return attrs.evolve(message, content=wrap_tool_result(message.content, message.name))


def _tool_message(
    call: PendingCall, tool: Any, result: ToolResult, locations: list[dict[str, Any]]
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "tool",
        "tool_call_id": call.call_id,
        "name": call.name,
        "content": result.text,
        "is_error": result.is_error,
    }
    if tool is not None and call.arguments is not None:
        message["title"] = _safe_title(tool, call.arguments)
        message["kind"] = tool.kind
    if locations:
        message["locations"] = locations
    return message


def _safe_title(tool: Any, args: dict[str, Any]) -> str:
    try:
        return str(tool.title(args))
    except Exception:
        return str(tool.name)


def _locations(tool: Any, args: dict[str, Any], session: AgentSession) -> list[dict[str, Any]]:
    try:
        found = tool.locations(args, session.sandbox)
    except Exception:
        return []
    return [
        {"path": loc.path, **({"line": loc.line} if loc.line is not None else {})} for loc in found
    ]


def _title_from(prompt: list[dict[str, Any]]) -> str:
    for block in prompt:
        if block.get("type") == "text" and block.get("text", "").strip():
            line = block["text"].strip().splitlines()[0]
            return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"
    return ""
