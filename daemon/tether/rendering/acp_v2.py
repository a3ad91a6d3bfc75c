"""The ACP v2 (Preview) renderer: a turn's typed events as v2 `session/update` objects.

Owns: the one builder of each v2 update (the live turn's and the replay's), as the generated
v2 types (`tether_protocol.acp_v2`), with deterministic message ids (`<turnId>.0`,
`<turnId>.<step>`; docs/decisions/0002, 0018). Must not: send anything or decide anything
about the turn; it keeps only the step's ids.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from msgspec import UNSET, Struct, to_builtins

from tether_protocol import JsonObject
from tether_protocol.acp_v2 import schema_types as v2
from tether_protocol.conversation import block_to_json

from ..agent.sink import (
    BlockContent,
    ChangeContent,
    ContextCompacted,
    MemoryRecalled,
    Notice,
    PlanUpdated,
    PromptInserted,
    PromptSteered,
    StepStarted,
    SubagentChanged,
    TerminalExited,
    TerminalOutput,
    TerminalStarted,
    TextContent,
    TitleChanged,
    ToolCallPatch,
    ToolCallStarted,
    ToolContent,
    TurnEnded,
    TurnEvent,
    TurnStateChanged,
    UsageUpdated,
)
from . import emitter
from .acp_v2_answers import config_options_v2, prompt_message_id, steered_message_id

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from ..tools.base import ChangePreview, ToolLocation

# v2's updates: the generated types (encoded as they are); JSON only for what v1's shape
# passes on as it is (`AcpV2.shaped`) and `replay_complete` (not in the Preview schema)
Update: TypeAlias = Struct | JsonObject
# An open union's variant, given where the generated type names the union (`ContentBlock`,
# `DiffChange`, ...): encoded as the union would be, with no wrapper and no hook per value
Variant: TypeAlias = Any

# shared, never changed: a capability advertised, or withdrawn (an upsert's `{}`)
_CANCEL_TOOL = v2.ToolCallCapabilities(cancel=v2.ToolCallCancelCapabilities())
_NO_TOOL_CANCEL = v2.ToolCallCapabilities()
_CANCEL_TERMINAL = v2.TerminalCapabilities(cancel=v2.TerminalCancelCapabilities())
_NO_TERMINAL_CANCEL = v2.TerminalCapabilities()
_CANCEL_SESSION = v2.SubagentSessionCapabilities(cancel=v2.SessionCancelCapabilities())
_NO_SESSION_CANCEL = v2.SubagentSessionCapabilities()


def _meta(tether: dict[str, Any] | None) -> Any:
    return {"tether": tether} if tether else UNSET


def user_message(message_id: str, content: list[Any], tether: dict[str, Any] | None = None) -> Struct:
    """A whole user message (a prompt, a steered message): live at insertion, and replayed."""
    return v2.SessionUpdate_user_message(message_id=message_id, content=content, meta=_meta(tether))


def agent_message(message_id: str, content: list[Any], tether: dict[str, Any] | None = None) -> Struct:
    """A whole assistant message (the replay's: live, its chunks under the same id)."""
    return v2.SessionUpdate_agent_message(message_id=message_id, content=content, meta=_meta(tether))


def agent_thought(message_id: str, content: list[Any], tether: dict[str, Any] | None = None) -> Struct:
    return v2.SessionUpdate_agent_thought(message_id=message_id, content=content, meta=_meta(tether))


def text_block(text: Any) -> Variant:
    """A text block (a stored non-string as it is: encoding does not check types)."""
    return v2.ContentBlock_text(text=text)


def text_content(text: Any) -> Variant:
    """A tool call's text content."""
    return v2.ToolCallContent_content(content=text_block(text))


def block_content(block: Any) -> Variant:
    """A tool call's content block (JSON as stored or sent: open kinds pass as they are)."""
    return v2.ToolCallContent_content(content=block)


def _steered(e: PromptSteered) -> Update:
    content = [block_to_json(block) for block in e.content]
    return user_message(steered_message_id(e.turn_id, e.seq), content, {"steered": True, "afterStep": e.after_step})


def notice(text: str, **tether: Any) -> Struct:
    return v2.SessionUpdate_notice(severity="info", title=text.strip() or "(notice)", meta=_meta(tether))


def _diff(p: ChangePreview) -> Variant:
    """One change as v2's `diff`: what happens to which path, and the git-style patch."""
    change: Variant
    if p.move_to:
        change = v2.DiffChange_move(old_path=p.path, path=p.move_to)
    elif p.old_text is None and p.new_text is not None:
        change = v2.DiffChange_add(path=p.path)
    elif p.new_text is None:
        change = v2.DiffChange_delete(path=p.path)
    else:
        change = v2.DiffChange_modify(path=p.path)
    patch: Any = UNSET
    if p.unified_diff:
        header = f"diff --git a{p.path} b{p.move_to or p.path}\n"
        patch = v2.DiffPatch(format="git_patch", text=header + p.unified_diff)
    return v2.ToolCallContent_diff(changes=[change], patch=patch)


def tool_call_content_v2(previews: Iterable[ChangePreview]) -> list[Variant]:
    """The v2 content of a call's change previews (what a permission request shows)."""
    return [_diff(p) for p in previews]


def _content(items: Iterable[ToolContent]) -> list[Variant]:
    out: list[Variant] = []
    for item in items:
        if isinstance(item, TextContent):
            out.append(text_content(item.text))
        elif isinstance(item, ChangeContent):
            out.append(_diff(item.change))
        elif isinstance(item, BlockContent):
            out.append(block_content(block_to_json(item.block)))
        else:
            out.append(v2.ToolCallContent_terminal(terminal_id=item.terminal_id))
    return out


def _locations(found: Iterable[ToolLocation]) -> list[v2.ToolCallLocation]:
    return [v2.ToolCallLocation(path=loc.path, line=UNSET if loc.line is None else loc.line) for loc in found]


# a call's upsert, live (`_patch`: only what changed) and replayed (the call folded whole)
tool_call_update = v2.SessionUpdate_tool_call_update


def _tool_call(e: ToolCallStarted) -> Update | None:
    if e.parent_call_id is not None:
        return None  # a sub-agent's call: shown on its own session (`subagent_update`)
    return tool_call_update(tool_call_id=e.call_id, title=e.title, kind=e.kind, status=e.status)


def _patch(e: ToolCallPatch) -> Update | None:
    """What changed, as one upsert (the rest `UNSET`: left out); built in one call, no dict."""
    if e.parent_call_id is not None or e.child_session_id is not None:
        return None  # a sub-agent's call, or its progress under the `delegate` call: on its own session
    capabilities: Any = UNSET
    if e.cancellable is not None:  # an upsert: `{}` withdraws the cancel it advertised
        capabilities = _CANCEL_TOOL if e.cancellable else _NO_TOOL_CANCEL
    return tool_call_update(
        tool_call_id=e.call_id,
        title=UNSET if e.title is None else e.title,
        kind=UNSET if e.kind is None else e.kind,
        status="cancelled" if e.cancelled else UNSET if e.status is None else e.status,
        content=UNSET if e.content is None else _content(e.content),
        locations=UNSET if e.locations is None else _locations(e.locations),
        raw_input=UNSET if e.raw_input is None else e.raw_input,
        capabilities=capabilities,
        # the other keys of `_meta.tether` (parentCallId, childSessionId): their events returned above
        meta=UNSET if e.approved_by is None else {"tether": {"approvedBy": e.approved_by}},
    )


def terminal_output(e: TerminalOutput) -> Struct:
    data = base64.b64encode(e.data.encode("utf-8", "replace")).decode("ascii")
    return v2.SessionUpdate_terminal_output_chunk(terminal_id=e.terminal_id, data=data)


def terminal_started(e: TerminalStarted) -> Struct:
    """The terminal exists before the call's content refers to it; `capabilities.cancel`
    while it runs (`terminal/cancel`), withdrawn at its exit."""
    return v2.SessionUpdate_terminal_update(
        terminal_id=e.terminal_id,
        command=e.command,
        cwd=e.cwd,
        capabilities=_CANCEL_TERMINAL if e.cancellable else _NO_TERMINAL_CANCEL,
    )


def terminal_exited(e: TerminalExited) -> Struct:
    """Its exit: the code, or the signal that killed it (SIGKILL when the event names none)."""
    signal = None if e.exit_code is not None else (e.signal or "SIGKILL")
    return v2.SessionUpdate_terminal_update(
        terminal_id=e.terminal_id,
        exit_status=v2.TerminalExitStatus(exit_code=e.exit_code, signal=signal),
        capabilities=_NO_TERMINAL_CANCEL,
    )


def _as_variant(value: Any) -> Variant:
    return value


# the states that carry nothing but their name: one shared value each (never changed), as
# `state_update` and as a child's state on `subagent_update` (the schema's `StateUpdate`)
_STATE_UPDATES: dict[str, Struct] = {
    "running": v2.SessionUpdate_state_update_running(state="running"),
    "requires_action": v2.SessionUpdate_state_update_requires_action(state="requires_action"),
}
_CHILD_STATES: dict[str, Struct] = {
    "running": v2.StateUpdate_running(),
    "requires_action": v2.StateUpdate_requires_action(),
}


def state_snapshot(state: str) -> Struct:
    """`state_update` alone: the state a session is in now (after `session/resume`): no
    stop reason, nothing ended."""
    return _STATE_UPDATES.get(state) or v2.SessionUpdate_state_update_idle(state="idle")


def _failure(e: TurnStateChanged) -> Any:
    """An idle state's `error` (the JSON-RPC error object), or UNSET."""
    if e.error is None:
        return UNSET
    return v2.Error(code=e.error["code"], message=e.error["message"], data=e.error.get("data", UNSET))


def state_update(e: TurnStateChanged) -> Struct:
    """`state_update`, live and replayed (2-4 a turn, on every viewer): an idle state says
    why the work stopped, and the failure."""
    if e.state != "idle":
        return _STATE_UPDATES[e.state]
    stop_reason = e.stop_reason or "end_turn"
    return v2.SessionUpdate_state_update_idle(state="idle", stop_reason=stop_reason, error=_failure(e))


def _child_state(e: TurnStateChanged) -> Variant:
    """A child's state on `subagent_update`: `state_update`'s, as the schema's `StateUpdate`."""
    if e.state != "idle":
        return _CHILD_STATES[e.state]
    return v2.StateUpdate_idle(stop_reason=e.stop_reason or "end_turn", error=_failure(e))


def subagent_update(e: SubagentChanged) -> Struct:
    """The child session on its parent: announced, then its states mirrored (a patch)."""
    capabilities: Any = UNSET
    if e.cancellable is not None:
        capabilities = _CANCEL_SESSION if e.cancellable else _NO_SESSION_CANCEL
    return v2.SessionUpdate_subagent_update(
        session_id=e.session_id,
        title=UNSET if e.title is None else e.title,
        description=UNSET if e.description is None else e.description,
        capabilities=capabilities,
        state=UNSET if e.state is None else _child_state(e.state),
        meta={"tether": {"parentCallId": e.parent_call_id}},
    )


def _recalled(e: MemoryRecalled) -> Update:
    hits = [
        {
            "sessionId": m.session_id,
            "sessionTitle": m.session_title,
            "messageSeq": m.seq,
            "role": m.role,
            "snippet": m.snippet,
        }
        for m in e.messages
    ]
    title = f"memory: {len(e.messages)} message(s) of earlier sessions given to the model (~{e.tokens} tokens)"
    return notice(title, memory={"tokens": e.tokens, "hits": hits})


def compacted(replaced: int, reason: str | None = None) -> Struct:
    """The notice that `replaced` earlier messages were summarised (live: with the reason)."""
    text = f"{replaced} earlier messages were summarised to save context"
    return notice(f"{text}: {reason}" if reason is not None else text, compaction={"replaced": replaced})


_STATELESS: dict[type, Callable[[Any], Update | None]] = {
    ToolCallStarted: _tool_call,
    ToolCallPatch: _patch,
    TerminalOutput: terminal_output,
    TerminalStarted: terminal_started,
    TerminalExited: terminal_exited,
    UsageUpdated: lambda e: v2.SessionUpdate_usage_update(used=e.used, size=e.size),
    TitleChanged: lambda e: v2.SessionUpdate_session_info_update(title=e.title),
    Notice: lambda e: notice(e.text),
    ContextCompacted: lambda e: compacted(e.replaced, e.reason),
    MemoryRecalled: _recalled,
    TurnStateChanged: state_update,
    PromptSteered: _steered,
    SubagentChanged: subagent_update,
    TurnEnded: lambda e: state_update(TurnStateChanged("idle", e.stop_reason)),
}


class AcpV2:
    """The renderer of one session's updates on a v2 connection: it keeps the current
    message ids (set by `PromptInserted` and `StepStarted`), so chunks carry them."""

    __slots__ = ("_session_id", "_message_id", "_thought_id", "_turn_id")
    silent: ClassVar[frozenset[type]] = frozenset()  # its ids follow every event

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id
        self._turn_id = ""
        self._message_id = ""
        self._thought_id = ".thought"

    def _step(self, message_id: str) -> None:
        self._message_id, self._thought_id = message_id, f"{message_id}.thought"

    def chunk(self, kind: str, text: str) -> Update:
        if kind == "thought":
            return v2.SessionUpdate_agent_thought_chunk(message_id=self._thought_id, content=text_block(text))
        return v2.SessionUpdate_agent_message_chunk(message_id=self._message_id, content=text_block(text))

    def event(self, event: TurnEvent) -> Update | None:
        if isinstance(event, StepStarted):
            self._turn_id = event.turn_id
            self._step(f"{event.turn_id}.{event.index}")
            return None
        if isinstance(event, PromptInserted):
            self._turn_id = event.turn_id
            self._step(f"{event.turn_id}.1")  # until the first step says otherwise
            content = [block_to_json(block) for block in event.content]
            return user_message(prompt_message_id(event.turn_id), content)
        if isinstance(event, PlanUpdated):
            entries = [v2.PlanEntry(content=x.content, priority=x.priority, status=x.status) for x in event.entries]
            plan: Variant = v2.PlanUpdateContent_items(plan_id=f"{self._session_id}.plan", entries=entries)
            return v2.SessionUpdate_plan_update(plan=plan)
        return _STATELESS[type(event)](event)

    def notice(self, text: str) -> Update:
        return notice(text)

    def shaped(self, update: Any) -> Update | None:
        """An update built in v1's shape outside a turn (queue notices, option changes) in
        v2's: options renamed (`configId`, `groupId`); not sent: a mode change (v2 has no
        modes: the option change that comes with it says it) and a queued prompt's text (v2
        shows a prompt once, as `user_message` at its insertion). It reads v1's shape (its
        `sessionUpdate` names); the rest passes as v1 built it (the same fields on v2)."""
        body: JsonObject = update if isinstance(update, dict) else to_builtins(update)
        kind = body.get("sessionUpdate")
        if kind == "config_option_update":
            options = config_options_v2(body.get("configOptions") or [])
            return v2.SessionUpdate_config_option_update(
                config_options=_as_variant(options), meta=body.get("_meta", UNSET)
            )
        if kind in _NOT_ON_V2:
            return None
        return body

    def available_commands(self, commands: Iterable[tuple[str, str, str | None]]) -> Update:
        """v2's command list: each typed `command`, an input hint typed `text`."""
        listed: list[Variant] = [
            v2.AvailableCommand_command(
                name=name,
                description=description,
                input_=_as_variant(v2.AvailableCommandInput_text(hint=hint)) if hint else UNSET,
            )
            for name, description, hint in commands
        ]
        return v2.SessionUpdate_available_commands_update(available_commands=listed)


# v1's updates a v2 connection is not sent (see `AcpV2.shaped`)
_NOT_ON_V2 = frozenset(("current_mode_update", "user_message_chunk"))

# every update this module builds as a generated type: framed by msgspec in one pass
emitter.V2_TYPES.update(t for t in v2.SessionUpdate.known.values() if issubclass(t, Struct))
emitter.V2_TYPES.update(v2.SessionUpdate_state_update.known.values())
