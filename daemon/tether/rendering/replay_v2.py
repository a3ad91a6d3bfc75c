"""History replay on ACP v2: stored messages shown again as v2 `session/update`s (`session/resume`).

Owns: `ReplayV2`, stored messages under the live message ids (SPEC §12.9) by the live
turn's builders (`acp_v2`), a page at a time; a `delegate` call's child and a command's
terminal after its call; `REPLAY_COMPLETE`, the marker after. Must not: read the store,
change the history (v1's reading is `replay.py`) or build an update `acp_v2` builds.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from msgspec import UNSET, Struct

from tether_protocol import ENCODER, JsonObject, dumps

from ..agent.history import nothing_said
from ..agent.sink import SubagentChanged, TurnStateChanged
from .acp_v2 import (
    AcpV2,
    Update,
    agent_message,
    agent_thought,
    block_content,
    compacted,
    notice,
    subagent_update,
    text_block,
    text_content,
    tool_call_update,
    user_message,
)
from .acp_v2_answers import prompt_message_id, steered_message_id
from .replay import INTERRUPTED, results_by_step, waiting_step
from .replay_terminals import terminal_replayed

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from ..store.children import ChildRecord

# (body, status, turn id or None, seq): a stored message as the v2 replay reads it
Stored = tuple[JsonObject, str, "str | None", int]


class ReplayComplete(Struct, kw_only=True, omit_defaults=True, tag_field="sessionUpdate", tag="replay_complete"):
    """The marker after a replay: declared by Tether, in the shape of RFD "v2 Replay Complete
    Signal" (the Preview's schema does not list it yet, so the generated model has no type)."""


REPLAY_COMPLETE: Update = ReplayComplete()


@dataclass(frozen=True, slots=True)
class ChildShown:
    """A `delegate` call's sub-agent as its parent's replay shows it: its session, and its
    own replay (frames on its id), sent after the `subagent_update` that announces it."""

    record: ChildRecord
    frames: list[bytes] = field(default_factory=list)


# what a replay yields: an update of this session (v2's type, or JSON where it is rare), or a
# child's frame, built already
Shown = Struct | Update | bytes


class ReplayV2:
    """The v2 replay of one session, fed in order (`feed` per page, then `finish`). It keeps
    where it is in the current turn across pages (its id and step),
    and holds back from the last assistant message on: its calls' results may come in the
    next page. With `pending` (calls waiting for approval) feed the whole history at once:
    the waiting step is the last one naming them."""

    __slots__ = (
        "session_id",
        "pending",
        "workspace",
        "_unshown",
        "_head",
        "_held",
        "_turn",
        "_step",
        "_retry",
        "_plans",
        "_prompts",
    )

    def __init__(
        self,
        session_id: str,
        pending: set[str] | frozenset[str] = frozenset(),
        *,
        children: Mapping[str, ChildShown] | None = None,
        workspace: str | None = None,
    ) -> None:
        """`children` by their `delegate` call's id; `workspace`: commands' terminals are
        shown (a client that set `_meta.terminal_output`), their cwd under it."""
        self.session_id, self.pending = session_id, pending
        self.workspace = workspace
        self._unshown = dict(children or {})  # children not replayed yet (after their call)
        self._head = (
            b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":' + dumps(session_id) + b',"update":'
        )
        self._held: list[Stored] = []
        self._turn = ""  # the current turn's id
        self._step = 0  # the step of the last assistant message of the turn
        self._retry = False  # that message was set aside (`incomplete`): the step is streamed again
        self._plans = AcpV2(session_id)  # renders a replayed `update_plan` as the live turn did
        self._prompts = 0

    def feed(self, page: Sequence[Stored]) -> Iterator[bytes]:
        messages = self._held + list(page)
        cut = len(messages)
        for index in range(len(messages) - 1, -1, -1):
            if messages[index][0].get("role") == "assistant":
                cut = index
                break
        self._held = messages[cut:]
        return self._frames(messages[:cut])

    def finish(self) -> Iterator[bytes]:
        messages, self._held = self._held, []
        return itertools.chain(self._frames(messages), map(self.frame, self.rest()))

    def rest(self) -> list[Shown]:
        """The children whose `delegate` call is not in the history replayed (their parent's
        daemon died, or its turn runs, before the call's step was stored): after the rest."""
        out: list[Shown] = []
        for child in self._unshown.values():
            out += [_announced(child.record, {}), *child.frames]
        self._unshown.clear()
        return out

    def frame(self, update: Shown) -> bytes:
        if type(update) is bytes:  # a child's, on its own id
            return update
        return self._head + ENCODER.encode(update) + b"}}"

    def _frames(self, messages: list[Stored]) -> Iterator[bytes]:
        """A page's frames, built at once (one list, no generator per update). Stored strings
        are whole (`_json.loads` read them: U+FFFD for a lone surrogate), as v1's replay has them."""
        head, encode, frames = self._head, ENCODER.encode, []
        for update in self.updates(messages):
            frames.append(update if type(update) is bytes else head + encode(update) + b"}}")
        return iter(frames)

    def updates(self, messages: Sequence[Stored]) -> list[Shown]:
        """The updates of `messages` (a whole number of steps: each assistant message with
        the tool results after it), in order."""
        bodies = [(body, status) for body, status, _turn, _seq in messages]
        answers = results_by_step(bodies)
        waiting_at = waiting_step(bodies, self.pending)
        out: list[Shown] = []
        for index, (body, status, turn_id, seq) in enumerate(messages):
            role = body.get("role")
            if role == "user":
                self._user(out, body, status, turn_id, seq)
            elif role == "assistant":
                self._assistant(out, body, status, turn_id, answers.get(index, {}), index == waiting_at)
        return out

    def _user(self, out: list[Shown], body: JsonObject, status: str, turn_id: str | None, seq: int) -> None:
        if "compaction" in body:
            out.append(compacted(body["compaction"].get("replaced", 0)))
            return
        if "steered" in body or (turn_id is not None and turn_id == self._turn):  # joined a running turn
            marked = body.get("steered")
            steered: JsonObject = marked if isinstance(marked, dict) else {}
            tether = {"steered": True, "afterStep": steered.get("afterStep"), **_status(status)}
            out.append(user_message(steered_message_id(self._turn, seq), body.get("content") or [], tether))
            return
        self._prompts += 1
        self._turn = turn_id or f"{self.session_id}.p{self._prompts}"  # a prompt stored outside a turn
        self._step, self._retry = 0, False
        out.append(user_message(prompt_message_id(self._turn), body.get("content") or [], _status(status)))

    def _assistant(
        self,
        out: list[Shown],
        body: JsonObject,
        status: str,
        turn_id: str | None,
        results: dict[str, JsonObject],
        waiting: bool,
    ) -> None:
        if turn_id is not None and turn_id != self._turn:  # a turn whose prompt is not stored (a fork's)
            self._turn, self._step, self._retry = turn_id, 0, False
        if not self._retry:
            self._step += 1
        self._retry = status == "incomplete"
        if status == "interrupted" and nothing_said(body):
            out.append(notice(INTERRUPTED, status="interrupted"))
            return
        tether = _status(status)
        message_id = f"{self._turn}.{self._step}"
        if thought := body.get("thinking"):
            out.append(agent_thought(f"{message_id}.thought", [text_block(thought)], tether))
        if text := body.get("text"):
            out.append(agent_message(message_id, [text_block(text)], tether))
        for call in body.get("tool_calls") or ():
            result = results.get(call["id"])
            if self.workspace is not None and result is not None and call.get("name") == "run_command":
                out.extend(terminal_replayed(call, result, self.workspace))
            out.append(_call(call, result, waiting and call["id"] in self.pending))
            if (child := self._unshown.pop(call["id"], None)) is not None:
                out.append(_announced(child.record, call))
                out.extend(child.frames)
            if call.get("name") == "update_plan" and call["id"] in results and not results[call["id"]].get("is_error"):
                plan = self._plan(call.get("arguments"))
                if plan is not None:
                    out.append(plan)

    def _plan(self, arguments: Any) -> Update | None:
        """The `plan_update` the live call sent (its arguments are the whole plan)."""
        from ..agent.sink import plan_of
        from ..tools.errors import ToolError
        from ..tools.update_plan import plan_entries

        try:
            return self._plans.event(plan_of(plan_entries(arguments)))
        except (ToolError, ValueError):  # a stored call whose plan no longer reads: its result says what it was
            return None


def _announced(child: ChildRecord, call: JsonObject) -> Update:
    """The child's `subagent_update` as a client holds it after the live ones: its title and
    task, and (ended) its last state, no longer cancellable; a running child's state comes
    after the replay (`subagent_update` with its state now, SPEC §12.9)."""
    arguments = call.get("arguments")
    task = arguments.get("task") if isinstance(arguments, dict) else None
    ended = child.stop_reason is not None
    return subagent_update(
        SubagentChanged(
            child.session_id,
            child.parent_call_id,
            title=child.title,
            description=task if isinstance(task, str) else None,
            cancellable=False if ended else None,
            state=TurnStateChanged("idle", stop_reason=child.stop_reason) if ended else None,
        )
    )


def _status(status: str) -> dict[str, Any]:
    """`_meta.tether.status` of a message that did not complete normally (SPEC §4.6)."""
    return _COMPLETE if status == "complete" else {"status": status}


_COMPLETE: dict[str, Any] = {}  # shared: read, never changed


def _call(call: JsonObject, result: JsonObject | None, waiting: bool) -> Shown:
    """A stored call with its result folded in: one upsert with what the live call's
    reports added up to (its title, kind and status, its arguments, the result's text and
    blocks, its locations); stored JSON (decoded) is encoded in the same pass as the rest."""
    name, call_id = call.get("name"), call["id"]  # a stored call has its id (`results_by_step` reads it)
    arguments = call.get("arguments", {})
    if result is None:
        status = "pending" if waiting else "failed"
        return tool_call_update(tool_call_id=call_id, title=name, kind="other", status=status, raw_input=arguments)
    content = [text_content(result.get("content", "")), *map(block_content, result.get("blocks") or ())]
    return tool_call_update(
        tool_call_id=call_id,
        title=result.get("title", name),
        kind=result.get("kind", "other"),
        status="failed" if result.get("is_error") else "completed",
        content=content,
        locations=result.get("locations") or UNSET,  # stored as the live call sent them
        raw_input=arguments,
    )
