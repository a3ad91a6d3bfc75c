"""The hook points of a turn: `session_start` and `prompt_submit` before it, `step_end`,
`turn_end` and `pre_compact` as it goes.

Owns: firing those stages; turning their context into one more text block of the user
message (so the model reads it, and the history keeps it), and a `prompt_submit` deny into
the turn's refusal. Must not: stream from the model or write to the store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether_protocol.conversation import ContentBlock, TextBlock

from ..agent.hook_port import PromptHooks
from ..agent.sink import Notice

if TYPE_CHECKING:
    from ..agent.session import AgentSession
    from .engine import Hooks

__all__ = ["observe", "prompt_hooks"]


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


async def observe(hooks: Hooks | None, stage: str, **fields: Any) -> bool:
    """A stage that only reports (`step_end`, `turn_end`, `pre_compact`): its hooks' notices
    show; whether it had any."""
    if hooks is None or not hooks.wants(stage):
        return False
    await hooks.fire(stage, **fields)
    return True
