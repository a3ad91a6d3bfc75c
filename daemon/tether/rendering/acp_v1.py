"""The ACP v1 renderer: a turn's typed events as `session/update` update objects.

Owns: the v1 shape of every `tether.agent.sink` event, of the command list, of a mode change
and of a change preview, as Structs of `tether_protocol._updates` (docs/decisions/0018).
Must not: send anything, keep state, or decide anything about the turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias, cast

import tether_protocol as up
import tether_protocol as wire
from tether_protocol import JsonObject
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

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from ..tools.base import ChangePreview, ToolLocation

# One ACP `session/update` update object: a Struct of the model (a renderer not yet on the
# model may still hand JSON; `emitter.frame` writes both)
Update: TypeAlias = up.SessionUpdate | JsonObject


def as_sent(block: JsonObject) -> Any:
    """A content block as the conversation stores it (ACP's spelling, maybe a kind the
    model does not declare: image, audio), sent as it is: the encoder writes the dict."""
    return block


def change_content(previews: Iterable[ChangePreview]) -> list[wire.ToolCallContent]:
    """ACP tool call content for the changes a tool would make: a `diff` per text change,
    a text block for a directory, link or binary file (no text to diff: what happens)."""
    blocks: list[wire.ToolCallContent] = []
    for p in previews:
        if p.old_text is None and p.new_text is None:
            what = f"move to {p.move_to}" if p.move_to else "delete"
            blocks.append(wire.ToolCallContentBlock(wire.TextContent(f"{what}: {p.path}\n{p.unified_diff}")))
        else:
            blocks.append(wire.DiffContent(p.move_to or p.path, p.new_text or "", old_text=p.old_text))
    return blocks


def _content(items: tuple[ToolContent, ...]) -> list[wire.ToolCallContent]:
    out: list[wire.ToolCallContent] = []
    for item in items:
        if isinstance(item, TextContent):
            out.append(wire.ToolCallContentBlock(wire.TextContent(item.text)))
        elif isinstance(item, ChangeContent):
            out.extend(change_content([item.change]))
        elif isinstance(item, BlockContent):
            out.append(wire.ToolCallContentBlock(as_sent(block_to_json(item.block))))
        else:
            out.append(wire.TerminalContent(item.terminal_id))
    return out


def locations(found: Iterable[ToolLocation]) -> list[wire.ToolCallLocation]:
    return [wire.ToolCallLocation(loc.path, loc.line) for loc in found]


def _tether(**keys: Any) -> up.UpdateMeta:
    return up.UpdateMeta(tether=up.UpdateTetherMeta(**keys))


def _tool_call(e: ToolCallStarted) -> Update:
    # the events carry the kind and status the tool gave: the model's Literals by contract
    call = up.ToolCall(e.call_id, e.title, cast("wire.ToolKind", e.kind), e.status)
    if e.parent_call_id is not None:
        call.meta = _tether(parent_call_id=e.parent_call_id)
    return call


def _patch(e: ToolCallPatch) -> Update:
    tether = None
    if e.approved_by is not None or e.parent_call_id is not None or e.child_session_id is not None:
        tether = up.UpdateTetherMeta(
            approved_by=e.approved_by,
            parent_call_id=e.parent_call_id,
            child_session_id=e.child_session_id,
        )
    terminal = None if e.terminal is None else up.TerminalInfo(e.terminal.terminal_id, e.terminal.cwd)
    return up.ToolCallUpdate(
        e.call_id,
        status=e.status,
        title=e.title,
        kind=cast("wire.ToolKind | None", e.kind),
        raw_input=cast("JsonObject | None", e.raw_input),
        content=None if e.content is None else _content(e.content),
        locations=None if e.locations is None else locations(e.locations),
        meta=up.UpdateMeta(tether, terminal) if tether or terminal else None,
    )


def _terminal_output(e: TerminalOutput) -> Update:
    meta = up.UpdateMeta(terminal_output=up.TerminalOutput(e.terminal_id, e.data))
    return up.ToolCallUpdate(e.call_id, meta=meta)


def _terminal_exit(e: TerminalExited) -> Update:
    # v1 has always said SIGKILL for a command that did not exit by itself
    exit_ = up.TerminalExit(e.terminal_id, e.exit_code, None if e.exit_code is not None else "SIGKILL")
    return up.ToolCallUpdate(e.call_id, meta=up.UpdateMeta(terminal_exit=exit_))


def notice(text: str, **tether: Any) -> up.AgentMessageChunk:
    # ACP has no "notice" update; a marked message chunk is shown by every client.
    return up.AgentMessageChunk(wire.TextContent(text), _tether(notice=True, **tether))


def available_commands(commands: Iterable[tuple[str, str, str | None]]) -> Update:
    """`available_commands_update` for (name, description, input hint or None)."""
    return up.AvailableCommandsUpdate(
        [
            up.AvailableCommand(name, description, up.AvailableCommandInput(hint) if hint else None)
            for name, description, hint in commands
        ]
    )


def current_mode(mode_id: str) -> Update:
    """`current_mode_update`: the mode changed other than by the client's `session/set_mode`."""
    return up.CurrentModeUpdate(cast("wire.ModeId", mode_id))


def _compacted(e: ContextCompacted) -> Update:
    text = f"\n\n[{e.replaced} earlier messages were summarised to save context: {e.reason}]\n\n"
    return notice(text, compaction=up.Compaction(e.replaced))


def _recalled(e: MemoryRecalled) -> Update:
    """What retrieved memory gave the model, readable in any client, listed in
    `_meta.tether.memory` for clients that show it their own way."""
    shown = "; ".join(f"{m.session_title or m.session_id} #{m.seq}" for m in e.messages)
    text = (
        f"\n[memory: {len(e.messages)} message{'s' if len(e.messages) != 1 else ''} of earlier sessions "
        f"given to the model (~{e.tokens} tokens): {shown}]\n"
    )
    hits = [up.MemoryHit(m.session_id, m.session_title, m.seq, m.role, m.snippet) for m in e.messages]
    return notice(text, memory=up.MemoryRecall(e.tokens, hits))


def _plan(e: PlanUpdated) -> Update:
    entries = [up.PlanEntry(x.content, cast("Any", x.priority), cast("Any", x.status)) for x in e.entries]
    return up.Plan(entries)


def _turn_ended(e: TurnEnded) -> Update:
    return up.SessionInfoUpdate(meta=_tether(turn_ended=up.TurnEnded(e.turn_id, cast("Any", e.stop_reason))))


def _nothing(_event: object) -> None:
    """An event v1 shows nothing for (the emitter does not ask: `AcpV1.silent`)."""
    return None


_RENDER: dict[type, Callable[[Any], Update | None]] = {
    ToolCallStarted: _tool_call,
    ToolCallPatch: _patch,
    TerminalOutput: _terminal_output,
    TerminalStarted: _nothing,  # the call's patch carries `_meta.terminal_info`
    TerminalExited: _terminal_exit,
    PlanUpdated: _plan,
    UsageUpdated: lambda e: up.UsageUpdate(e.used, e.size),
    TitleChanged: lambda e: up.SessionInfoUpdate(e.title),
    Notice: lambda e: notice(e.text),
    ContextCompacted: _compacted,
    MemoryRecalled: _recalled,
    StepStarted: _nothing,  # v1 messages have no ids: nothing to say
    PromptInserted: _nothing,  # v1 answers the prompt at the turn's end instead
    PromptSteered: _nothing,  # v1's marked user_message_chunks are sent by the queue
    TurnStateChanged: _nothing,
    SubagentChanged: _nothing,  # v1 nests the child under the `delegate` call
    TurnEnded: _turn_ended,
}


_CHUNKS: dict[str, type[up.AgentMessageChunk] | type[up.AgentThoughtChunk]] = {
    "text": up.AgentMessageChunk,
    "thought": up.AgentThoughtChunk,
}


def render(event: TurnEvent) -> Update | None:
    """The v1 update for `event`, or None when v1 shows nothing for it."""
    return _RENDER[type(event)](event)


class AcpV1:
    """The renderer `SessionUpdates` uses for an ACP v1 connection (stateless: v1
    messages have no ids)."""

    __slots__ = ()
    silent: ClassVar[frozenset[type]] = frozenset(kind for kind, shown in _RENDER.items() if shown is _nothing)

    def chunk(self, kind: str, text: str) -> Update:
        """Merged deltas of one kind ("text" or "thought")."""
        return _CHUNKS[kind](wire.TextContent(text))

    def event(self, event: TurnEvent) -> Update | None:
        return _RENDER[type(event)](event)

    def notice(self, text: str) -> Update:
        return notice(text)

    def available_commands(self, commands: Iterable[tuple[str, str, str | None]]) -> Update:
        return available_commands(commands)

    def shaped(self, update: Update) -> Update | None:
        """An update built in v1's shape outside the renderer: as it is."""
        return update


V1 = AcpV1()
