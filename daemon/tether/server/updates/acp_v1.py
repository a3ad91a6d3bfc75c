"""The ACP v1 renderer: a turn's typed events as `session/update` update objects.

Owns: the v1 shape of every event in `tether.agent.sink` (`tool_call` for a call's
first report, `tool_call_update` for its patches, command output as
`_meta.terminal_output` / `terminal_exit`, `plan`, `usage_update`,
`session_info_update`, notices as marked `agent_message_chunk`s), the slash command list
(`available_commands_update`) and a mode the daemon changed (`current_mode_update`) and of a change
preview (`change_content`: typed `ToolCallContent`, which `session/request_permission`
sends as it is; `diff_blocks` is its JSON for a `tool_call_update`).
Must not: send anything, keep state, or decide anything about the turn. A v2 renderer
(updates as upserts by id) is a sibling of this module with its own table; the events
already carry the ids it keys on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeAlias

import tether_protocol._common as wire
from tether_protocol._converter import unstructure
from tether_protocol._json import JsonObject
from tether_protocol.conversation import block_to_json

from ...agent.sink import (
    BlockContent,
    ChangeContent,
    ContextCompacted,
    MemoryRecalled,
    Notice,
    PlanUpdated,
    PromptInserted,
    StepStarted,
    TerminalExited,
    TerminalOutput,
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
from ...tools.base import ChangePreview, ToolLocation

Update: TypeAlias = JsonObject  # one ACP `session/update` update object: the wire edge


def text_content(text: str) -> Update:
    return {"type": "content", "content": {"type": "text", "text": text}}


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


def diff_blocks(previews: Iterable[ChangePreview]) -> list[Update]:
    """`change_content` as JSON (the converter writes `type` first, as the wire always had it)."""
    return [unstructure(block) for block in change_content(previews)]


def _content(items: tuple[ToolContent, ...]) -> list[Update]:
    out: list[Update] = []
    for item in items:
        if isinstance(item, TextContent):
            out.append(text_content(item.text))
        elif isinstance(item, ChangeContent):
            out.extend(diff_blocks([item.change]))
        elif isinstance(item, BlockContent):
            out.append({"type": "content", "content": block_to_json(item.block)})
        else:
            out.append({"type": "terminal", "terminalId": item.terminal_id})
    return out


def locations(found: Iterable[ToolLocation]) -> list[Update]:
    return [{"path": loc.path, **({"line": loc.line} if loc.line is not None else {})} for loc in found]


def _tool_call(e: ToolCallStarted) -> Update:
    update: Update = {
        "sessionUpdate": "tool_call", "toolCallId": e.call_id, "title": e.title, "kind": e.kind, "status": e.status,
    }
    if e.parent_call_id is not None:
        update["_meta"] = {"tether": {"parentCallId": e.parent_call_id}}
    return update


def _patch(e: ToolCallPatch) -> Update:
    update: Update = {"sessionUpdate": "tool_call_update", "toolCallId": e.call_id}
    if e.status is not None:
        update["status"] = e.status
    if e.title is not None:
        update["title"] = e.title
    if e.kind is not None:
        update["kind"] = e.kind
    if e.raw_input is not None:
        update["rawInput"] = e.raw_input
    if e.content is not None:
        update["content"] = _content(e.content)
    if e.locations is not None:
        update["locations"] = locations(e.locations)
    meta: Update = {}
    tether = {
        key: value for key, value in (
            ("approvedBy", e.approved_by), ("parentCallId", e.parent_call_id), ("childSessionId", e.child_session_id),
        ) if value is not None
    }
    if tether:
        meta["tether"] = tether
    if e.terminal is not None:
        meta["terminal_info"] = {"terminal_id": e.terminal.terminal_id, "cwd": e.terminal.cwd}
    if meta:
        update["_meta"] = meta
    return update


def _terminal_output(e: TerminalOutput) -> Update:
    meta = {"terminal_output": {"terminal_id": e.terminal_id, "data": e.data}}
    return {"sessionUpdate": "tool_call_update", "toolCallId": e.call_id, "_meta": meta}


def _terminal_exit(e: TerminalExited) -> Update:
    # v1 has always said SIGKILL for a command that did not exit by itself
    exit_ = {"terminal_id": e.terminal_id, "exit_code": e.exit_code, "signal": None if e.exit_code is not None else "SIGKILL"}
    return {"sessionUpdate": "tool_call_update", "toolCallId": e.call_id, "_meta": {"terminal_exit": exit_}}


def notice(text: str, **tether: Any) -> Update:
    # ACP has no "notice" update; a marked message chunk is shown by every client.
    return {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": text},
        "_meta": {"tether": {"notice": True, **tether}},
    }


def available_commands(commands: Iterable[tuple[str, str, str | None]]) -> Update:
    """`available_commands_update` for (name, description, input hint or None)."""
    listed: list[Update] = [
        {"name": name, "description": description, **({"input": {"hint": hint}} if hint else {})}
        for name, description, hint in commands
    ]
    return {"sessionUpdate": "available_commands_update", "availableCommands": listed}


def current_mode(mode_id: str) -> Update:
    """`current_mode_update`: the mode changed other than by the client's `session/set_mode`."""
    return {"sessionUpdate": "current_mode_update", "currentModeId": mode_id}


def _compacted(e: ContextCompacted) -> Update:
    text = f"\n\n[{e.replaced} earlier messages were summarised to save context: {e.reason}]\n\n"
    return notice(text, compaction={"replaced": e.replaced})


def _recalled(e: MemoryRecalled) -> Update:
    """What retrieved memory gave the model, readable in any client, listed in
    `_meta.tether.memory` for clients that show it their own way."""
    shown = "; ".join(f"{m.session_title or m.session_id} #{m.seq}" for m in e.messages)
    text = (
        f"\n[memory: {len(e.messages)} message{'s' if len(e.messages) != 1 else ''} of earlier sessions "
        f"given to the model (~{e.tokens} tokens): {shown}]\n"
    )
    hits = [
        {"sessionId": m.session_id, "sessionTitle": m.session_title, "messageSeq": m.seq, "role": m.role,
         "snippet": m.snippet}
        for m in e.messages
    ]
    return notice(text, memory={"tokens": e.tokens, "hits": hits})


_RENDER: dict[type, Callable[[Any], Update | None]] = {
    ToolCallStarted: _tool_call,
    ToolCallPatch: _patch,
    TerminalOutput: _terminal_output,
    TerminalExited: _terminal_exit,
    PlanUpdated: lambda e: {
        "sessionUpdate": "plan",
        "entries": [{"content": x.content, "priority": x.priority, "status": x.status} for x in e.entries],
    },
    UsageUpdated: lambda e: {"sessionUpdate": "usage_update", "used": e.used, "size": e.size},
    TitleChanged: lambda e: {"sessionUpdate": "session_info_update", "title": e.title},
    Notice: lambda e: notice(e.text),
    ContextCompacted: _compacted,
    MemoryRecalled: _recalled,
    StepStarted: lambda e: None,  # v1 messages have no ids: nothing to say
    PromptInserted: lambda e: None,  # v1 answers the prompt at the turn's end instead
    TurnStateChanged: lambda e: None,
    TurnEnded: lambda e: {
        "sessionUpdate": "session_info_update",
        "_meta": {"tether": {"turnEnded": {"turnId": e.turn_id, "stopReason": e.stop_reason}}},
    },
}


_CHUNKS = {"text": "agent_message_chunk", "thought": "agent_thought_chunk"}


def render(event: TurnEvent) -> Update | None:
    """The v1 update for `event`, or None when v1 shows nothing for it."""
    return _RENDER[type(event)](event)


class AcpV1:
    """The renderer `SessionUpdates` uses for an ACP v1 connection (stateless: v1
    messages have no ids)."""

    __slots__ = ()

    def chunk(self, kind: str, text: str) -> Update:
        """Merged deltas of one kind ("text" or "thought")."""
        return {"sessionUpdate": _CHUNKS[kind], "content": {"type": "text", "text": text}}

    def event(self, event: TurnEvent) -> Update | None:
        return _RENDER[type(event)](event)

    def notice(self, text: str) -> Update:
        return notice(text)

    def available_commands(self, commands: Iterable[tuple[str, str, str | None]]) -> Update:
        return available_commands(commands)


V1 = AcpV1()
