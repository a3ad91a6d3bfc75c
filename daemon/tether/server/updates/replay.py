"""History replay: stored messages shown again as ACP `session/update`s (`session/load`).

Owns: turning stored history back into the updates a turn sent. `replay_updates`
spells the replayed updates out as the SPEC reads; `replay_frames` writes the same
notifications as text, which is what `session/load` sends.
Must not: change the history or decide anything about it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from tether_protocol._json import JsonObject, dumps_text

from ...agent.history import nothing_said

# The connection's JSON encoding (compact, UTF-8 kept as is) as text, for the replay:
# `_str` for strings (the C escaper; orjson escapes every string the same way), `_any`
# for the rest.
_str: Callable[[str], str] = json.encoder.encode_basestring
_any = dumps_text


def _json(value: Any) -> str:
    return _str(value) if type(value) is str else _any(value)


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
) -> Iterator[str]:
    """The `session/update` notifications of `replay_updates`, as JSON text, in order.
    With `step_breaks` (a client that is not Tether's own: `STEP_BREAK`), a step's text
    after an earlier step's text of the same turn (`said`: before `bodies`) starts a paragraph.

    Byte for byte `frame(session_id, update)` of each update (a test holds the two
    together), written as text straight from the stored bodies: no update dicts, and
    the encoder only for values that are not strings. A 10,000-message `session/load`
    spent most of its time building and encoding updates; this is the one place the
    replay is spelled out twice.
    """
    head = f'{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":{_json(session_id)},"update":{{"sessionUpdate":'
    answers = _results_by_step(bodies)
    pending_at = _waiting_step(bodies, pending)
    for index, (body, status) in enumerate(bodies):
        end = "}}}" if status == "complete" else f',"_meta":{{"tether":{{"status":{_json(status)}}}}}}}}}}}'
        role = body.get("role")
        if role == "user" and "compaction" in body:
            said = False
            replaced = body["compaction"].get("replaced", 0)
            text = _str(f"\n\n[{replaced} earlier messages were summarised to save context]\n\n")
            yield (
                f'{head}"agent_message_chunk","content":{{"type":"text","text":{text}}},'
                f'"_meta":{{"tether":{{"notice":true,"compaction":{{"replaced":{_json(replaced)}}}}}}}}}}}}}'
            )
        elif role == "user":
            said = False
            mark = end if "steered" not in body else f',"_meta":{_any(_steered_meta(body, status))}}}}}}}'
            for block in body.get("content", []):
                yield f'{head}"user_message_chunk","content":{_json(block)}{mark}'
        elif role == "assistant" and status == "interrupted" and nothing_said(body):
            yield (
                f'{head}"agent_message_chunk","content":{{"type":"text","text":{_str(INTERRUPTED)}}},'
                f'"_meta":{{"tether":{{"notice":true,"status":"interrupted"}}}}}}}}}}'
            )
        elif role == "assistant":
            if body.get("thinking"):
                yield f'{head}"agent_thought_chunk","content":{{"type":"text","text":{_json(body["thinking"])}}}{end}'
            if body.get("text"):
                text = body["text"]
                if step_breaks and said and type(text) is str:
                    text = STEP_BREAK + text
                said = True
                yield f'{head}"agent_message_chunk","content":{{"type":"text","text":{_json(text)}}}{end}'
            results = answers.get(index, {})
            for call in body.get("tool_calls", []):
                waiting = index == pending_at and call["id"] in pending
                yield _call_frame(head, call, results.get(call["id"]), waiting)


def _steered_meta(body: JsonObject, status: str) -> JsonObject:
    """A message steered into a running turn (SPEC §3.37): marked, with the step it followed."""
    steered = body["steered"] if isinstance(body["steered"], dict) else {}
    tether: JsonObject = {"steered": True, "afterStep": steered.get("afterStep")}
    if status != "complete":
        tether["status"] = status
    return {"tether": tether}


def _call_frame(head: str, call: JsonObject, result: JsonObject | None, waiting: bool) -> str:
    """A stored call with its result folded in, as a `tool_call` notification."""
    call_id = call["id"]
    if result is None:
        title, kind, state = call["name"], "other", "failed"
    else:
        title = result.get("title", call["name"])
        kind = result.get("kind", "other")
        state = "failed" if result.get("is_error") else "completed"
    if waiting:
        state = "pending"  # waiting for approval; asked again after load
    text = (
        f'{head}"tool_call","toolCallId":{_json(call_id)},"title":{_json(title)},'
        f'"kind":{_json(kind)},"status":"{state}","rawInput":{_json(call.get("arguments", {}))}'
    )
    if result is None:
        return text + "}}}"
    content = (
        f'{text},"content":[{{"type":"content","content":{{"type":"text","text":'
        f'{_json(result.get("content", ""))}}}}}'
    )
    for block in result.get("blocks", ()):  # what the client was shown besides the text
        content += f',{{"type":"content","content":{_any(block)}}}'
    content += "]"
    if result.get("locations"):
        return f'{content},"locations":{_json(result["locations"])}}}}}}}'
    return content + "}}}"


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

    def feed(self, page: Sequence[tuple[JsonObject, str]]) -> Iterator[str]:
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

    def finish(self) -> Iterator[str]:
        bodies, self._held = self._held, []
        return replay_frames(self.session_id, bodies, step_breaks=self.step_breaks, said=self._said)


def replay_updates(
    bodies: list[tuple[JsonObject, str]], pending: set[str] | frozenset[str] = frozenset()
) -> list[JsonObject]:
    """The updates that show a stored conversation again, in order.

    `bodies` are (message body, status) pairs. A tool result is folded into the
    `tool_call` of the call it answers: its text, then the blocks the client was shown
    (stored as the conversation's block JSON, `block_to_json`'s, which is ACP's content
    block: sent as stored, as a user message's blocks are). Messages that were cancelled
    or interrupted carry `_meta.tether.status` so a client can mark them.
    """
    answers = _results_by_step(bodies)
    pending_at = _waiting_step(bodies, pending)
    updates: list[JsonObject] = []
    for index, (body, status) in enumerate(bodies):
        meta = {"_meta": {"tether": {"status": status}}} if status != "complete" else {}
        role = body.get("role")
        if role == "user" and "compaction" in body:
            updates.append(_compaction_notice(body["compaction"].get("replaced", 0)))
        elif role == "user":
            marked = meta if "steered" not in body else {"_meta": _steered_meta(body, status)}
            for block in body.get("content", []):
                updates.append({"sessionUpdate": "user_message_chunk", "content": block, **marked})
        elif role == "assistant" and status == "interrupted" and nothing_said(body):
            updates.append(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": INTERRUPTED},
                    "_meta": {"tether": {"notice": True, "status": status}},
                }
            )
        elif role == "assistant":
            if body.get("thinking"):
                updates.append(
                    {
                        "sessionUpdate": "agent_thought_chunk",
                        "content": {"type": "text", "text": body["thinking"]},
                        **meta,
                    }
                )
            if body.get("text"):
                updates.append(
                    {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": body["text"]},
                        **meta,
                    }
                )
            results = answers.get(index, {})
            for call in body.get("tool_calls", []):
                update = _replayed_call(call, results.get(call["id"]))
                if index == pending_at and call["id"] in pending:
                    update["status"] = "pending"  # waiting for approval; asked again after load
                updates.append(update)
    return updates


def _compaction_notice(replaced: int) -> JsonObject:
    return {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": f"\n\n[{replaced} earlier messages were summarised to save context]\n\n"},
        "_meta": {"tether": {"notice": True, "compaction": {"replaced": replaced}}},
    }


def _results_by_step(bodies: Sequence[tuple[JsonObject, str]]) -> dict[int, dict[str, JsonObject]]:
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


def _waiting_step(bodies: Sequence[tuple[JsonObject, str]], pending: set[str] | frozenset[str]) -> int | None:
    """The position of the assistant message whose calls wait for approval: the last
    one naming a pending call (an earlier step may have used the same call id)."""
    if not pending:
        return None
    for index in range(len(bodies) - 1, -1, -1):
        body = bodies[index][0]
        if body.get("role") == "assistant" and any(c["id"] in pending for c in body.get("tool_calls", [])):
            return index
    return None


def _replayed_call(call: JsonObject, result: JsonObject | None) -> JsonObject:
    update: JsonObject = {
        "sessionUpdate": "tool_call",
        "toolCallId": call["id"],
        "title": (result or {}).get("title", call["name"]),
        "kind": (result or {}).get("kind", "other"),
        "status": "failed" if result is None or result.get("is_error") else "completed",
        "rawInput": call.get("arguments", {}),
    }
    if result is not None:
        update["content"] = [
            {"type": "content", "content": {"type": "text", "text": result.get("content", "")}},
            *({"type": "content", "content": block} for block in result.get("blocks", ())),
        ]
        if result.get("locations"):
            update["locations"] = result["locations"]
    return update
