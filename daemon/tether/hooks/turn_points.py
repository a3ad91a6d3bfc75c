"""The hook points of a turn: `session_start` and `prompt_submit` before it, `step_end`,
`turn_end` and `pre_compact` as it goes; and ask-first's answer.

Owns: firing those stages; turning their context into one more text block of the user
message (so the model reads it, and the history keeps it), a `prompt_submit` deny into
the turn's refusal, and the clarifying question as the turn's one step. Must not: stream
from the model or write to the store other than through the journal it is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether_protocol.conversation import ContentBlock, TextBlock

from ..agent.sink import Notice, StepStarted, TurnSink
from ..agent.state import StepState

if TYPE_CHECKING:
    from ..agent.journal import TurnJournal
    from ..agent.session import AgentSession
    from .engine import Hooks

__all__ = ["PromptHooks", "ask_first_step", "observe", "prompt_hooks"]


@dataclass(slots=True)
class PromptHooks:
    blocks: list[ContentBlock]
    refusal: str = ""  # a `prompt_submit` hook denied the prompt: why


async def prompt_hooks(hooks: Hooks | None, session: AgentSession, blocks: list[ContentBlock]) -> PromptHooks:
    if hooks is None:
        return PromptHooks(blocks)
    told = hooks.hooks.notices if not session.hooks_told else ()
    for notice in (*hooks.hooks.alerts, *told):
        hooks.sink.emit(Notice(f"\n[{notice}]\n"))
    contexts: list[str] = []
    if not session.hooks_told:  # the session's first turn in this daemon
        session.hooks_told = True
        started = await hooks.fire("session_start", mode=session.mode)
        contexts += started.contexts
    text = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
    submitted = await hooks.fire("prompt_submit", prompt=text, mode=session.mode)
    if submitted.decision == "deny":
        return PromptHooks(blocks, f"the prompt was refused by {submitted.by}: {submitted.reason or 'no reason given'}")
    contexts += submitted.contexts
    if contexts:
        joined = "\n\n".join(contexts)
        blocks = [*blocks, TextBlock(f"<hook-context>\n{joined}\n</hook-context>")]
    return PromptHooks(blocks)


async def observe(hooks: Hooks | None, stage: str, **fields: Any) -> None:
    """A stage that only reports (`step_end`, `turn_end`, `pre_compact`): its hooks' notices show."""
    if hooks is not None and hooks.wants(stage):
        await hooks.fire(stage, **fields)


def prompt_text(blocks: Sequence[ContentBlock]) -> str:
    return "\n".join(b.text for b in blocks if isinstance(b, TextBlock))


async def ask_first_step(journal: TurnJournal, sink: TurnSink, question: str) -> str:
    """The turn's one step is Tether's question (stored as the assistant's reply)."""
    state = StepState(1)
    journal.open(state)
    sink.emit(StepStarted(journal.turn_id, 1))
    state.text_parts.append(question)
    sink.text(question)
    journal.calls_assembled()
    await journal.commit_step()
    return "end_turn"
