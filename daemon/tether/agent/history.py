"""The per-call history pipeline: what the model sees of the conversation (seed 003 §5-6).

Owns: `prepare` (keep the last N user turns, prune old tool results, repair call/result
pairing) and `repair_pairing` alone, on the typed conversation (docs/decisions/0011-agent.md).
Must not: mutate its input, touch the store, call a model, or do more than a few linear
passes (it runs on every step).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether_protocol import conversation
from tether_protocol.conversation import (
    AssistantMessage,
    CompactionSummary,
    JsonObject,
    Message,
    ToolResultMessage,
    UserMessage,
    messages_from_json,
    replace,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "CLEARED",
    "MISSING",
    "is_compaction_summary",
    "limit_turns",
    "nothing_said",
    "prepare",
    "prune_tool_results",
    "repair_pairing",
    "stored_view",
    "trim_middle",
]

# Seed 003 §6 defaults.
SOFT_TRIM_RATIO = 0.3
HARD_CLEAR_RATIO = 0.5
SOFT_TRIM_OVER = 4_000  # characters; shorter results are left whole
SOFT_TRIM_KEEP = 1_500  # characters kept at each end of a soft-trimmed result
PROTECT_LAST_ASSISTANTS = 3

CLEARED = "[tool result cleared to save context; run the tool again if needed]"
MISSING = "result missing (the conversation was shortened or interrupted)"


def trim_middle(text: str, head: int, tail: int) -> str:
    """`text` with its middle replaced by a marker saying how much went, if it is longer
    than head + tail; the ends carry what matters most (a file's top, a command's error)."""
    cut = len(text) - head - tail
    if cut <= 0:
        return text
    return f"{text[:head]}\n[... {cut} characters trimmed ...]\n{text[len(text) - tail :]}"


def nothing_said(message: Message | JsonObject) -> bool:
    """An assistant message with nothing to show or send: the marker that recovery
    stores for a turn interrupted before any of its answer was saved. The model is not
    sent it (some providers refuse an empty assistant message); a replay says where the
    turn stopped. Takes a stored body as well: the boundary for callers that still
    read bodies as JSON (the replay)."""
    if isinstance(message, dict):
        return not (message.get("text") or message.get("thinking") or message.get("tool_calls"))
    return conversation.nothing_said(message)


def is_compaction_summary(message: Message) -> bool:
    return type(message) is CompactionSummary


def stored_view(bodies: Sequence[JsonObject]) -> list[Message]:
    """What the model sees of a stored session's visible message bodies (in order): the
    last compaction summary, the messages it kept (stored before it: its ``kept``; none
    for summaries stored before that was recorded) and what follows, typed, with tool
    calls and results paired (a crash can leave a call without its result). Only that
    tail is converted: a long session's earlier history is never read into the model."""
    for index in range(len(bodies) - 1, -1, -1):
        body = bodies[index]
        if body.get("role") == "user" and "compaction" in body:
            summary = conversation.message_from_json(body)
            kept = summary.kept if isinstance(summary, CompactionSummary) else None
            kept = kept if kept is not None and 0 <= kept <= index else 0
            before, after = bodies[index - kept : index], bodies[index + 1 :]
            return repair_pairing([summary, *messages_from_json(before), *messages_from_json(after)])
    return repair_pairing(messages_from_json(bodies))


def prepare(
    messages: Sequence[Message],
    *,
    context_window: int,
    used_tokens: int,
    keep_user_turns: int = 50,
) -> list[Message]:
    """The view to send: turn-limited, pruned by fullness, with every call answered."""
    view = limit_turns(messages, keep_user_turns)
    fullness = used_tokens / context_window if context_window > 0 else 0.0
    if fullness >= SOFT_TRIM_RATIO:
        view = prune_tool_results(view, clear=fullness >= HARD_CLEAR_RATIO)
    return repair_pairing(view)


def limit_turns(messages: Sequence[Message], keep: int) -> list[Message]:
    """The last `keep` user turns (at least the current one), after a leading summary.

    A turn starts at a user message (tool results have their own role, so every user
    message starts one) and runs to the next. A compaction summary at the front stands
    for everything before it, so it always stays and is not counted as a turn.
    """
    keep = max(1, keep)
    lead = 1 if messages and is_compaction_summary(messages[0]) else 0
    seen = 0
    for index in range(len(messages) - 1, lead - 1, -1):
        if isinstance(messages[index], (UserMessage, CompactionSummary)):
            seen += 1
            if seen == keep:
                if index <= lead:
                    break  # nothing before this turn but the summary: nothing to cut
                return [*messages[:lead], *messages[index:]]
    return list(messages)


def prune_tool_results(messages: Sequence[Message], *, clear: bool) -> list[Message]:
    """Soft-trim (or, with `clear`, replace) the content of old tool results.

    Results after the third-last assistant message belong to the model's latest work
    and are left alone. Only tool messages are touched, so user messages (the first
    one, the task, above all) never are.
    """
    protect_from = len(messages)
    found = 0
    for index in range(len(messages) - 1, -1, -1):
        if type(messages[index]) is AssistantMessage:
            found += 1
            protect_from = index
            if found == PROTECT_LAST_ASSISTANTS:
                break
    out = list(messages)
    for index in range(protect_from):
        message = out[index]
        if type(message) is not ToolResultMessage:
            continue
        content = message.content
        if clear:
            # A result shorter than the placeholder would only grow by being "cleared".
            new = CLEARED if len(content) > len(CLEARED) else content
        elif len(content) > SOFT_TRIM_OVER:
            new = trim_middle(content, SOFT_TRIM_KEEP, SOFT_TRIM_KEEP)
        else:
            continue
        if new is not content:
            out[index] = replace(message, content=new)
    return out


def repair_pairing(messages: Sequence[Message]) -> list[Message]:
    """Every tool call answered exactly once, right after its assistant message.

    Results come before the next user or assistant message, in the order given; a call
    without one gets a synthetic error result at the end of its group; results whose
    call is not open there (leading ones after a cut, duplicates, strays) are dropped.
    """
    out: list[Message] = []
    open_calls: dict[str, str] = {}  # id -> name, the last assistant's unanswered calls

    def close_group() -> None:
        for call_id, name in open_calls.items():
            out.append(ToolResultMessage(call_id, name, MISSING, is_error=True))
        open_calls.clear()

    for message in messages:
        if isinstance(message, ToolResultMessage):
            if open_calls.pop(message.tool_call_id, None) is not None:
                out.append(message)
            continue
        if open_calls:  # (most messages close no group: no call per message)
            close_group()
        out.append(message)
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                open_calls.setdefault(call.id, call.name)
    close_group()
    return out
