"""History replay on ACP v1: stored messages shown again as `session/update`s (`session/load`).

Owns: `replayed`, `replay_frames`, `replay_updates` and `PagedReplay` (a page at a time),
stored JSON sent as it is (`msgspec.Raw`), and the step helpers `replay_v2.py` shares.
Must not: change the history or decide anything about it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import msgspec
from msgspec import UNSET, Raw
from orjson import dumps as orjson_dumps

import tether_protocol as up
from tether_protocol import (
    ENCODER,
    JsonObject,
    TextContent,
    ToolCallContent,
    ToolCallContentBlock,
    ToolCallStatus,
    dumps,
)

from ..agent.history import nothing_said
from .acp_v1 import notice

# Between the texts of two steps of one turn, for a client that is not Tether's own: a live
# turn shows the step's tool calls between them, which such a client's load may not show
# (CodeCompanion's `/resume` ran "Reading it first." and "Editing." together).
STEP_BREAK = "\n\n"

# What a replay shows of a turn whose daemon died before it saved any of the answer
INTERRUPTED = "\n[interrupted: Tether stopped before this turn finished]\n"


def replay_frames(
    session_id: str,
    bodies: Sequence[tuple[JsonObject, str]],
    pending: set[str] | frozenset[str] = frozenset(),
    step_breaks: bool = False,
    said: bool = False,
) -> Iterator[bytes]:
    """The `session/update` notifications of `replayed`, as UTF-8 JSON, in order: byte for
    byte `emitter.frame(session_id, update)` of each (a test holds the two together)."""
    head = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":' + dumps(session_id) + b',"update":'
    encode = ENCODER.encode  # stored strings are whole: `_json.loads` read them (U+FFFD for a lone surrogate)
    for update in replayed(bodies, pending, step_breaks, said):
        yield head + encode(update) + b"}}"


def replay_updates(
    bodies: list[tuple[JsonObject, str]], pending: set[str] | frozenset[str] = frozenset()
) -> list[JsonObject]:
    """`replayed` as JSON objects (the SPEC's reading of the replay)."""
    return [msgspec.json.decode(ENCODER.encode(update)) for update in replayed(bodies, pending)]


def _raw(value: Any) -> Any:
    """Stored JSON sent as it is, in the wire's spelling (`_json.dumps`: orjson's floats)."""
    try:
        return Raw(orjson_dumps(value))
    except TypeError:  # what orjson refuses: `_json.dumps` decides
        return Raw(dumps(value))


def replayed(
    bodies: Sequence[tuple[JsonObject, str]],
    pending: set[str] | frozenset[str] = frozenset(),
    step_breaks: bool = False,
    said: bool = False,
) -> Iterator[up.SessionUpdate]:
    """The updates that show a stored conversation again, in order.

    `bodies` are (message body, status) pairs. A tool result is folded into the
    `tool_call` of the call it answers: its text, then the blocks the client was shown
    (stored as the conversation's block JSON, `block_to_json`'s, which is ACP's content
    block: sent as stored, as a user message's blocks are). Messages that were cancelled
    or interrupted carry `_meta.tether.status` so a client can mark them. With
    `step_breaks` (a client that is not Tether's own: `STEP_BREAK`), a step's text after
    an earlier step's text of the same turn (`said`: before `bodies`) starts a paragraph.
    """
    answers = results_by_step(bodies)
    pending_at = waiting_step(bodies, pending)
    user_chunk, thought_chunk, message_chunk = up.UserMessageChunk, up.AgentThoughtChunk, up.AgentMessageChunk
    for index, (body, status) in enumerate(bodies):
        meta = None if status == "complete" else _status_meta(status)
        role = body.get("role")
        if role == "user" and "compaction" in body:
            said = False
            replaced = body["compaction"].get("replaced", 0)
            text = f"\n\n[{replaced} earlier messages were summarised to save context]\n\n"
            yield notice(text, compaction=up.Compaction(_kept(replaced)))
        elif role == "user":
            said = False
            marked = meta if "steered" not in body else _steered_meta(body, status)
            for block in body.get("content", ()):
                yield user_chunk(_raw(block), marked)
        elif role == "assistant" and status == "interrupted" and nothing_said(body):
            yield notice(INTERRUPTED, status="interrupted")
        elif role == "assistant":
            if thought := body.get("thinking"):
                yield thought_chunk(TextContent(thought if type(thought) is str else _raw(thought)), meta)
            if answer := body.get("text"):
                if step_breaks and said and type(answer) is str:
                    answer = STEP_BREAK + answer
                said = True
                yield message_chunk(TextContent(answer if type(answer) is str else _raw(answer)), meta)
            if calls := body.get("tool_calls"):
                results = answers[index]
                for call in calls:
                    waiting = index == pending_at and call["id"] in pending
                    yield _replayed_call(call, results.get(call["id"]), waiting)


def _status_meta(status: str) -> up.UpdateMeta:
    return up.UpdateMeta(up.UpdateTetherMeta(status=status))  # type: ignore[arg-type]  # a stored MessageStatus


def _steered_meta(body: JsonObject, status: str) -> up.UpdateMeta:
    """A message steered into a running turn (SPEC §3.37): marked, with the step it followed."""
    steered = body["steered"] if isinstance(body["steered"], dict) else {}
    tether = up.UpdateTetherMeta(steered=True, after_step=_kept(steered.get("afterStep")))
    if status != "complete":
        tether.status = status  # type: ignore[assignment]  # a stored status is a MessageStatus
    return up.UpdateMeta(tether)


class PagedReplay:
    """``replay_frames`` of a session read a page at a time, sent as soon as it can be:
    the concatenated output of ``feed`` for each page and then ``finish`` is
    ``replay_frames`` of all of them (a test holds them together). An assistant
    message's tool results follow it, maybe in the next page, so the replay holds back
    from the last assistant message on. Not for a session with pending approvals (the
    waiting step is the last one naming them: only known at the end)."""

    __slots__ = ("session_id", "step_breaks", "_held", "_said")

    def __init__(self, session_id: str, step_breaks: bool = False) -> None:
        self.session_id, self.step_breaks = session_id, step_breaks
        self._held: list[tuple[JsonObject, str]] = []
        self._said = False  # the turn the held messages belong to has said text already

    def feed(self, page: Sequence[tuple[JsonObject, str]]) -> Iterator[bytes]:
        bodies = self._held + list(page)
        cut = len(bodies)
        for index in range(len(bodies) - 1, -1, -1):
            if bodies[index][0].get("role") == "assistant":
                cut = index
                break
        self._held = bodies[cut:]
        said = self._said
        if self.step_breaks:
            for body, _status in bodies[:cut]:
                role = body.get("role")
                said = role != "user" and (said or (role == "assistant" and bool(body.get("text"))))
            said, self._said = self._said, said
        return replay_frames(self.session_id, bodies[:cut], step_breaks=self.step_breaks, said=said)

    def finish(self) -> Iterator[bytes]:
        bodies, self._held = self._held, []
        return replay_frames(self.session_id, bodies, step_breaks=self.step_breaks, said=self._said)


def results_by_step(bodies: Sequence[tuple[JsonObject, str]]) -> dict[int, dict[str, JsonObject]]:
    """For each assistant message (by position), the results of its calls: the tool
    messages after it, up to the next assistant message. Call ids are not unique across
    a conversation (some local models and scripts reuse `call_0`), so a result answers
    the call of its own step, never a later one of the same id."""
    answers: dict[int, dict[str, JsonObject]] = {}
    current: dict[str, JsonObject] | None = None
    for index, (body, _status) in enumerate(bodies):
        role = body.get("role")
        if role == "assistant":
            current = answers[index] = {}
        elif role == "tool" and current is not None:
            current[body["tool_call_id"]] = body
    return answers


def waiting_step(bodies: Sequence[tuple[JsonObject, str]], pending: set[str] | frozenset[str]) -> int | None:
    """The position of the assistant message whose calls wait for approval: the last
    one naming a pending call (an earlier step may have used the same call id)."""
    if not pending:
        return None
    for index in range(len(bodies) - 1, -1, -1):
        body = bodies[index][0]
        if body.get("role") == "assistant" and any(c["id"] in pending for c in body.get("tool_calls", [])):
            return index
    return None


def _replayed_call(call: JsonObject, result: JsonObject | None, waiting: bool) -> up.ToolCall:
    """A stored call with its result folded in, as a `tool_call`."""
    kind: Any  # as the stored result names it (a tool's kind)
    state: ToolCallStatus
    call_id, name = call["id"], call["name"]
    if result is None:
        title, kind, state = name, "other", "failed"
    else:
        title = result.get("title", name)
        kind = result.get("kind", "other")
        state = "failed" if result.get("is_error") else "completed"
    if waiting:
        state = "pending"  # waiting for approval; asked again after load
    arguments = _raw(call.get("arguments", {}))
    # a stored id, title and kind are strings but for a broken store (`_kept`)
    call_id = call_id if type(call_id) is str else _kept(call_id)
    title = title if type(title) is str else _kept(title)
    kind = kind if type(kind) is str else _kept(kind)
    if result is None:
        return up.ToolCall(call_id, title, kind, state, arguments)
    text = result.get("content", "")
    content: list[ToolCallContent] = [ToolCallContentBlock(TextContent(text if type(text) is str else _raw(text)))]
    if "blocks" in result:
        content += [ToolCallContentBlock(_raw(block)) for block in result["blocks"]]
    where = result.get("locations")
    # as stored: ACP's locations
    return up.ToolCall(call_id, title, kind, state, arguments, content, _raw(where) if where else UNSET)


def _kept(value: Any) -> Any:
    """A stored scalar (a string, an integer, as written), or other JSON sent as it is."""
    kind = type(value)
    return value if kind is str or kind is int or kind is bool or value is None else _raw(value)
