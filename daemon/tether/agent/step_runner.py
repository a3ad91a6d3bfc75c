"""The step runner: streams one model step and assembles its tool calls.

Owns: each step's request (pruned, compacted when due), streaming and sanitising deltas to
the sink, timing, the partial save, recovering a broken-off reply, retrieved memory and the
memory flush (docs/decisions/0011-agent.md). Must not: run tools, ask the user but through
that flush, decide when the turn ends, build protocol JSON, or touch the store per delta.
"""

from __future__ import annotations

import contextlib
import math
import time
from typing import TYPE_CHECKING, cast

from tether_protocol.conversation import JsonObject, Message, ToolResultMessage, UserMessage, replace

from ..providers.base import (
    Finish,
    ModelRequest,
    Provider,
    ProviderError,
    ProviderEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageReport,
)
from ..store import StoreError
from .compaction import COMPACT_AT, compact, worth_compacting
from .context import build_request
from .guard import wrap_tool_result
from .history import prepare
from .memory import prompt_text, recall, turn_prompt, with_recall
from .sanitize import StreamSanitizer
from .sink import (
    ContextCompacted,
    MemoryRecalled,
    Notice,
    RecalledMessage,
    StepStarted,
    ToolCallPatch,
    ToolCallStarted,
    TurnSink,
    failed,
)
from .state import PendingCall, StepState
from .tokens import ContextEstimate
from .tool_view import known_locations, safe_title
from .turn_services import TurnServices

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterator

    from ..tools.registry import ToolRegistry
    from .journal import TurnJournal
    from .session import AgentSession

# How often the streamed output of the step in flight is saved (one clock read per event).
PARTIAL_EVERY_S = 0.5


class StepRunner:
    def __init__(
        self,
        session: AgentSession,
        journal: TurnJournal,
        *,
        provider: Provider,
        tools: ToolRegistry,
        sink: TurnSink,
        instructions: str,
        keep_user_turns: int,
        max_output_tokens: int,
        services: TurnServices | None = None,
        sanitizer: StreamSanitizer | None = None,
    ) -> None:
        """``sanitizer``: one kept for the session's turns (reset after each step); None: one a step."""
        self.session, self.journal = session, journal
        self._sanitizer = sanitizer
        self.provider, self.tools, self.sink = provider, tools, sink
        self.instructions = instructions
        self.keep_user_turns = keep_user_turns
        self.max_output_tokens = max_output_tokens
        # the session's chosen model, read once: a turn keeps the model it started with
        self.model = session.model or provider.model
        self.reasoning = session.reasoning or ""  # the same for the reasoning choice
        self._retried_step = False
        self._compacted_for_error = False
        self.services = services or TurnServices()
        # retrieved memory: searched once per turn; the block goes in front of `_prompt`
        self._recalled = False
        self._prompt: UserMessage | None = None
        self._memory_block = ""
        self._flushes = 0
        self._tool_specs: list[JsonObject] | None = None  # the tools as refreshed (MCP)
        # the view's size (tokens) from which a step compacts first (`compaction.should_compact`)
        window = provider.context_window
        self._compact_from = COMPACT_AT * window if window > 0 else math.inf

    async def stream(self, index: int, tool_specs: list[JsonObject]) -> StepState:
        """Stream one step; if the stream breaks after output was shown, retry it once.

        The provider already retried failures that happened before any output. A break
        after output is not replayed silently: what the client saw is kept in history
        marked `incomplete` (out of the model's view), the client is told, and the step
        is streamed again — once per turn, and only before any of its tools ran (tools
        run after the stream, so none has).
        """
        if self.tools.changing and await self.tools.refresh():  # MCP servers started, or a list changed
            self._tool_specs = self.tools.specs()
        tool_specs = self._tool_specs or tool_specs
        while True:
            state = StepState(index)
            self.journal.open(state)
            self.sink.emit(StepStarted(self.journal.turn_id, index))
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
                await self._set_aside(state, exc)

    async def _set_aside(self, state: StepState, exc: ProviderError) -> None:
        for call in state.calls.values():
            self.sink.emit(failed(call.call_id, "not run: the model's reply broke off"))
        await self.journal.set_aside(state)
        self.sink.emit(Notice(f"\n\n[the model's reply broke off: {exc}. Retrying this step once.]\n\n"))

    async def _stream_step(self, state: StepState, tool_specs: list[JsonObject]) -> None:
        used = await self._compact_if_needed()
        await self._recall_once()
        request = self._request(state, tool_specs, used)
        state.started = time.perf_counter()
        # the 7 output steps, without holding back prose
        sanitizer = self._sanitizer if self._sanitizer is not None else StreamSanitizer()
        try:
            # providers stream with async generators: closed at once on cancel
            events = cast("AsyncGenerator[ProviderEvent, None]", self.provider.stream(request))
            async with contextlib.aclosing(events) as stream:
                await self._consume(state, stream, sanitizer)
            text, thought = sanitizer.finish()
        finally:
            sanitizer.reset()  # for the next step (or turn): nothing of this reply is held
        if thought:
            state.add_thinking(thought, None, None)
            self.sink.thought(thought)
        if text:
            state.text_parts.append(text)
            self.sink.text(text)
        state.llm_done = time.perf_counter()

    def _request(self, state: StepState, tool_specs: list[JsonObject], used: int) -> ModelRequest:
        """``used``: the view's size in tokens (the estimate), for how much of it is pruned."""
        session = self.session
        messages = prepare(
            session.messages,
            context_window=self.provider.context_window,
            used_tokens=used,
            keep_user_turns=self.keep_user_turns,
        )
        view = [_wrapped(m) for m in messages]
        return build_request(
            messages=with_recall(view, self._memory_block, self._prompt) if self._memory_block else view,
            tools=tool_specs,
            workspace=session.workspace,
            model=self.model,
            max_output_tokens=self.max_output_tokens,
            session_id=session.id,
            step=state.index,
            instructions=self.instructions,
            reasoning=self.reasoning,
        )

    async def _consume(
        self, state: StepState, stream: AsyncIterator[ProviderEvent], sanitizer: StreamSanitizer
    ) -> None:
        """The hot loop: every event of the step's stream."""
        sink, text_parts, feed = self.sink, state.text_parts, sanitizer.feed
        clock = time.perf_counter
        next_save = state.started + PARTIAL_EVERY_S
        async for event in stream:
            if clock() >= next_save:
                # a time-based checkpoint (not per event): a killed daemon keeps this
                await self.journal.save_partial(state)
                next_save = clock() + PARTIAL_EVERY_S
            if type(event) is TextDelta:
                if state.first_token is None:
                    state.first_token = clock()
                text, thought = feed(event.text)
                if thought:  # first: in one piece, a closing think tag precedes the answer
                    state.add_thinking(thought, None, None)
                    sink.thought(thought)
                if text:
                    text_parts.append(text)
                    sink.text(text)
            elif type(event) is ThinkingDelta:
                state.add_thinking(event.text, event.signature, event.redacted)
                if event.text:
                    if state.first_token is None:
                        state.first_token = clock()
                    sink.thought(event.text)
            else:
                self._other_event(state, event)

    def _other_event(self, state: StepState, event: ProviderEvent) -> None:
        if isinstance(event, ToolCallStart):
            self._call_started(state, event)
        elif isinstance(event, ToolCallArgsDelta):
            call = state.calls.get(event.call_id)
            if call is not None:
                call.arg_parts.append(event.delta)
        elif isinstance(event, ToolCallEnd):
            call = state.calls.get(event.call_id)
            if call is not None:
                self._call_ended(call)
        elif isinstance(event, UsageReport):
            state.input_tokens = event.input_tokens
            state.output_tokens = event.output_tokens
            state.cached_tokens = event.cached_tokens
            state.cache_write_tokens = event.cache_write_tokens
        elif isinstance(event, Finish):
            state.finish_reason = event.reason

    def _call_started(self, state: StepState, event: ToolCallStart) -> None:
        state.calls[event.call_id] = PendingCall(event.call_id, event.name)
        tool = self.tools.get(event.name)
        self.sink.emit(ToolCallStarted(event.call_id, title=event.name, kind=tool.kind if tool else "other"))

    def _call_ended(self, call: PendingCall) -> None:
        call.finish()
        tool = self.tools.get(call.name)
        if tool is None or call.arguments is None:
            return
        locations = known_locations(tool, call.arguments, self.session)
        self.sink.emit(
            ToolCallPatch(
                call.call_id,
                title=safe_title(tool, call.arguments),
                raw_input=call.arguments,
                locations=locations or None,
            )
        )

    async def _recall_once(self) -> None:
        """Retrieved memory (agent/memory.py), at the turn's first step; the user sees what
        the model is given. A history that cannot be searched costs the turn nothing."""
        budget = self.services.memory_tokens
        if budget <= 0 or self._recalled:
            return
        self._recalled = True
        prompt = turn_prompt(self.session.messages)
        if prompt is None:
            return
        try:
            found = await recall(self.session.store, self.session.id, prompt_text(prompt), budget_tokens=budget)
        except StoreError as exc:
            self.sink.emit(Notice(f"\n[memory: earlier sessions could not be searched: {exc}]\n"))
            return
        if found.hits:
            self._prompt, self._memory_block = prompt, found.block
            shown = tuple(
                RecalledMessage(m.session_id, m.session_title, m.message_seq, m.role, m.snippet) for m in found.hits
            )
            self.sink.emit(MemoryRecalled(shown, found.tokens))

    # ---- compaction ----------------------------------------------------------------

    async def _compact_if_needed(self) -> int:
        """One comparison a step (the view's size is kept as its messages are stored); the
        view's size after, in tokens."""
        session = self.session
        used = session.view_size.used(session.messages)
        if used >= self._compact_from and worth_compacting(session.messages, self.provider.context_window):
            await self._compact(reason="the conversation passed 75% of the context window")
            used = session.view_size.used(session.messages)
        return used

    async def _compact(self, *, reason: str) -> None:
        """Summarise all but the last messages (seed 003); the summary replaces them in the
        model's view. The stored history keeps everything; the client is told."""
        session = self.session
        await self.services.hooks.observe("pre_compact", reason=reason, messages=len(session.messages))
        stated: list[str] = []
        view, summary = await compact(self.provider, session.messages, model=self.model, preferences=stated)
        replaced = summary.replaced
        await self.journal.record_compaction(summary)
        session.messages = view
        session.context = ContextEstimate()
        session.view_size = ContextEstimate()
        self.sink.emit(ContextCompacted(replaced, reason))
        if stated and session.mode != "read-only":
            # the memory flush: what the user said they want outlives this session if they approve
            self._flushes += 1
            from .memory_edit import propose_memory_edit  # (the remember tool's module: on a flush only)

            await propose_memory_edit(
                session,
                self.services,
                self.sink,
                call_id=f"memory-flush-{self.journal.turn_id}-{self._flushes}",
                facts=stated,
                title="Keep the preferences you stated in .tether/MEMORY.md",
                quiet=True,
            )


def _wrapped(message: Message) -> Message:
    """The model's copy of a tool result, marked as data (the stored one stays raw)."""
    if not isinstance(message, ToolResultMessage):
        return message
    return replace(message, content=wrap_tool_result(message.content, message.name))
