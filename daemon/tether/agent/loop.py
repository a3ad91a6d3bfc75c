"""One turn of the agent loop (seeds 004 and 003): the coordinator of its three parts.

Owns: screening the prompt, the title, the order of steps, where steered messages join,
cancellation, the run report and usage, ask-first's step, and resuming a turn left waiting
for approval (the sequence: docs/decisions/0011-agent.md). Must not: write to the store but
through the journal, run a tool but through the executor, or build protocol JSON.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import anyio

from tether_protocol import JsonObject, PendingApprovals, ProviderFailed
from tether_protocol.conversation import (
    ContentBlock,
    EmbeddedResource,
    GuardFinding,
    GuardRecord,
    TextBlock,
    UserMessage,
    replace,
)

from ..providers.base import Provider, ProviderError
from .context import project_instructions
from .executor import ToolExecutor
from .guard import Finding, GuardResult, truncate_user_blocks
from .hook_port import NO_HOOKS
from .journal import MODEL_VISIBLE, not_run_text
from .report import TurnHeader
from .session import ActiveTurn, AgentSession, Steer
from .sink import Notice, PromptSteered, StepStarted, TitleChanged, TurnSink, UsageUpdated, failed
from .state import StepState
from .step_runner import StepRunner
from .turn_parts import TurnParts, turn_parts
from .turn_services import TurnServices

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from ..tools.delegate import Delegator
    from ..tools.registry import ToolRegistry
    from .sanitize import StreamSanitizer

__all__ = ["MODEL_VISIBLE", "AgentTurn", "TurnOutcome", "TurnServices"]

_FINISH_TO_STOP = {
    "stop": "end_turn",
    "end_turn": "end_turn",
    "length": "max_tokens",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
    "content_filter": "refusal",
}
TITLE_CHARS = 60


@dataclass(slots=True)
class TurnOutcome:
    stop_reason: str  # ACP StopReason, or "error"
    turn_id: str
    error: ProviderError | None = None

    def failure(self) -> ProviderFailed | None:
        """The provider's failure as the protocol's error (v1's answer, v2's `state_update`)."""
        if self.error is None:
            return None
        data: JsonObject = {  # the error's `data` (wire JSON)
            "turnId": self.turn_id,
            "kind": self.error.kind,
            "retryable": self.error.retryable,
            **({"status": self.error.status} if self.error.status else {}),
        }
        return ProviderFailed(
            f"the model provider failed: {self.error}. What was streamed is kept in "
            f"the session history, marked as an error (turn {self.turn_id})",
            data=data,
        )


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
        tool_specs: list[JsonObject] | None = None,
        sub_agents: Callable[[], Delegator] | None = None,
        sanitizer: StreamSanitizer | None = None,
        parts: TurnParts | None = None,
    ) -> None:
        """``tool_specs``: ``tools.specs()`` as the session's setup made them once (None: made
        here); ``sub_agents``: builds the turn's `delegate` handler when a call needs it;
        ``sanitizer``, ``parts``: the session's, its turns' (None: this turn makes its own)."""
        self.session, self.handle = session, handle
        self.provider, self.tools, self.sink = provider, tools, sink
        self.max_steps = max_steps
        self.tool_specs, self.sub_agents = tool_specs, sub_agents
        self.started = time.time(), time.perf_counter()  # the run report's start
        parts = parts or turn_parts(session, guard_mode)  # type: ignore[arg-type]
        self.report, self.guard, self.journal = parts.report, parts.guard, parts.journal
        self.journal.start(handle.turn_id, handle.idempotency_key, handle.prompt_digest)
        self.services = services = services or TurnServices()
        self.steps = StepRunner(
            session,
            self.journal,
            provider=provider,
            tools=tools,
            sink=sink,
            # read once per turn (not per step): the system prompt stays byte-identical
            instructions=project_instructions(session.workspace, session.sandbox.is_withheld)
            if services.instructions is None
            else services.instructions,
            keep_user_turns=keep_user_turns,
            max_output_tokens=max_output_tokens,
            services=services,
            sanitizer=sanitizer,
        )

    @cached_property
    def executor(self) -> ToolExecutor:
        """Made by the turn's first tool call: a turn that calls none needs none."""
        return ToolExecutor(
            self.session,
            self.handle,
            tools=self.tools,
            sink=self.sink,
            services=self.services,
            guard=self.guard,
            journal=self.journal,
            sub_agents=self.sub_agents,
        )

    async def run(self, prompt: Sequence[ContentBlock], *, typed: Sequence[ContentBlock] = ()) -> TurnOutcome:
        """``typed``: what the user typed when ``prompt`` is a command's expansion (the
        session's title is taken from it, not from the expanded text)."""
        screened, notices, verdict = self._screen_prompt(prompt)
        refusal = ""
        if self.services.hooks is not NO_HOOKS:  # a turn given no hooks passes the prompt on as it is
            hooked = await self.services.hooks.prompt_submitted(self.session, screened)
            screened, refusal = hooked.blocks, hooked.refusal
        guard = None
        if verdict.findings:
            findings = tuple(GuardFinding(f.pattern, f.excerpt) for f in verdict.findings)
            guard = GuardRecord(findings, verdict.blocked)
        user = UserMessage(tuple(screened), guard)
        await self.journal.begin(user, blocked=verdict.blocked)
        for notice in notices:
            text = notice if notice.startswith("[") else f"[{notice}]"
            self.sink.emit(Notice(f"\n{text}\n"))
        if refusal:
            self.sink.emit(Notice(f"\n[{refusal}]\n"))
        if verdict.blocked or refusal:

            async def refused() -> str:
                return "refusal"

            return await self._ended(await self._drive(refused))
        if self.session.title is None:
            title = _title_from(typed or screened)
            if title:
                await self.journal.set_title(title)
                self.sink.emit(TitleChanged(title))
        question = None
        if self.services.ask_first:
            text = "\n".join(b.text for b in prompt if isinstance(b, TextBlock))
            question = self.services.hooks.first_question(text)
        if question is not None:
            return await self._ended(await self._drive(lambda: self._ask_first(question)))
        return await self._ended(await self._drive(self._steps))

    async def _ended(self, outcome: TurnOutcome) -> TurnOutcome:
        if await self.services.hooks.observe("turn_end", stop_reason=outcome.stop_reason):
            self.sink.flush()
        return outcome

    async def _ask_first(self, question: str) -> str:
        """The turn's first step is Tether's question (stored as the assistant's reply). A
        client that shows forms is asked it in one: the answer joins the turn as the user's
        message (as a steered one does) and the model takes it from there; else the turn ends."""
        state = StepState(1)
        self.journal.open(state)
        self.sink.emit(StepStarted(self.journal.turn_id, 1))
        state.text_parts.append(question)
        self.sink.text(question)
        self.journal.calls_assembled()
        await self.journal.commit_step()
        clarify = self.services.clarify
        answer = await clarify(question) if clarify is not None else None
        if answer is None:
            return "end_turn"
        content = (TextBlock(answer),)
        turn_id = self.journal.turn_id

        def landed(step: int, seq: int) -> None:
            self.sink.emit(PromptSteered(turn_id, step, seq, content))

        self.handle.steers.insert(0, Steer(content, landed))
        return await self._steps(start=2)

    def _screen_prompt(self, prompt: Sequence[ContentBlock]) -> tuple[list[ContentBlock], list[str], GuardResult]:
        """Over-long text is cut (never refused); the input guard looks at the rest."""
        kept, cut = truncate_user_blocks(prompt)
        notices: list[str] = [cut] if cut else []
        screened: list[ContentBlock] = []
        attached: list[Finding] = []  # findings in attached files' text
        for block in kept:
            text = block.resource.text if isinstance(block, EmbeddedResource) else None
            if isinstance(block, EmbeddedResource) and text is not None:
                resource = block.resource
                checked = self.guard.check_attachment(text, resource.uri)
                attached += checked.findings
                if checked.notice:
                    notices.append(checked.notice)
                if checked.blocked:
                    block = replace(block, resource=replace(resource, text=checked.text))
            screened.append(block)
        joined = "\n".join(b.text for b in screened if isinstance(b, TextBlock))
        verdict = self.guard.check_user(joined)
        if verdict.notice:
            notices.append(verdict.notice)
        verdict.findings += attached  # recorded with the message
        return screened, notices, verdict

    async def resume(self, pending: PendingApprovals) -> TurnOutcome:
        """Continue a turn a previous daemon left waiting for approval (seed 004's
        checkpoint at the suspension point): run the step's remaining tool calls (asking
        again), then the following steps. Finished steps are not sent to the model again."""
        self.journal.drop_stand_ins(pending.call_ids())

        async def steps() -> str:
            await self.tools.refresh()  # the session's MCP servers, for the calls left to run
            resumed = self.journal.resume(pending)
            self.executor.reannounce(resumed.calls)  # the replay already showed these calls
            for call in resumed.calls:
                if call.call_id in resumed.started:  # it may have run: never twice unasked
                    self.executor.refuse_started(call)
            timings = await self.executor.run_calls([c for c in resumed.calls if c.call_id not in resumed.started])
            self.report.add_step(self.handle.turn_id, resumed.step, timings, sum(t.latency_ms for t in timings))
            await self.journal.commit_step()
            if resumed.step.index >= self.max_steps:
                return "max_turn_requests"
            return await self._steps(start=resumed.step.index + 1)

        return await self._drive(steps)

    async def _drive(self, steps: Callable[[], Awaitable[str]]) -> TurnOutcome:
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
                for call_id in self.journal.unrun_calls():
                    # the client saw this call start; close it so it does not stay in progress
                    self.sink.emit(failed(call_id, not_run_text(status)))
                await self.journal.close(status)
                self.sink.flush()
                message = str(error) if error else None
                header = TurnHeader(
                    self.handle.turn_id, self.session.id, self.provider.name, self.steps.model, *self.started
                )
                report = self.report.report(header, stop_reason=stop_reason, status=status, error=message)
                await self.journal.finish(status, stop_reason, message, report)
        return TurnOutcome(stop_reason, self.handle.turn_id, error)

    async def _steps(self, start: int = 1) -> str:
        tool_specs = self.tools.specs() if self.tool_specs is None else self.tool_specs
        for index in range(start, self.max_steps + 1):
            await self._land_steers(index - 1)
            state = await self.steps.stream(index, tool_specs)
            calls = state.finish_calls()
            self.journal.calls_assembled()
            if not calls:
                self.report.add_step(self.handle.turn_id, state, [], 0.0)
                await self.journal.commit_step()
                await self.services.hooks.observe("step_end", step=index, tools=[])
                self._report_usage(state)
                if self.handle.steers and index < self.max_steps:
                    continue  # a message steered in: the model answers it in this turn
                return _FINISH_TO_STOP.get(state.finish_reason or "stop", "end_turn")
            t0 = time.perf_counter()
            timings = await self.executor.run_calls(calls)
            self.report.add_step(self.handle.turn_id, state, timings, (time.perf_counter() - t0) * 1000)
            await self.journal.commit_step()
            await self.services.hooks.observe("step_end", step=index, tools=[c.name for c in calls])
            self._report_usage(state, covered=len(self.session.messages) - len(calls))
        return "max_turn_requests"

    async def _land_steers(self, after_step: int) -> None:
        """The step boundary: messages steered in since the last one join the conversation
        (after the step's calls and all their results, before the next request). Shielded:
        a message stored is always reported landed, so it is never sent again as a turn."""
        while self.handle.steers:
            steer = self.handle.steers.pop(0)
            screened, notices, verdict = self._screen_prompt(steer.prompt)
            guard = None
            if verdict.findings:
                guard = GuardRecord(
                    tuple(GuardFinding(f.pattern, f.excerpt) for f in verdict.findings), verdict.blocked
                )
            with anyio.CancelScope(shield=True):
                user = UserMessage(tuple(screened), guard)
                seq = await self.journal.steer(user, blocked=verdict.blocked, after_step=after_step)
            steer.landed(after_step, seq)
            for notice in notices:
                self.sink.emit(Notice(f"\n{notice if notice.startswith('[') else f'[{notice}]'}\n"))

    def _report_usage(self, state: StepState, covered: int | None = None) -> None:
        """The usage after each step: how full the context is, against the window."""
        messages = self.session.messages
        context = self.session.context
        context.anchor(state.input_tokens, state.output_tokens, len(messages) if covered is None else covered)
        self.sink.emit(UsageUpdated(context.used(messages), self.provider.context_window))


def _title_from(prompt: Sequence[ContentBlock]) -> str:
    for block in prompt:
        if isinstance(block, TextBlock) and block.text.strip():
            line = block.text.strip().splitlines()[0]
            return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"
    return ""
