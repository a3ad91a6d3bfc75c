"""The ACP v2 (Preview) renderer: a turn's typed events as v2 `session/update` objects.

Owns: the v2 shape of every `tether.agent.sink` event, with deterministic message ids
(`<turnId>.0`, `<turnId>.<step>`; docs/decisions/0002, 0018).
Must not: send anything or decide anything about the turn; it keeps only the step's ids.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any, TypeAlias

from msgspec import to_builtins

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
from .acp_v1 import locations

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from ..tools.base import ChangePreview

Update: TypeAlias = JsonObject  # v2's updates: JSON until the v2 model renders them (v1's are Structs)


def config_options_v2(options: list[Update]) -> list[Update]:
    """v1's config options (JSON) in v2's names: `id` -> `configId`, `group` -> `groupId`."""
    renamed = {"id": "configId", "group": "groupId"}
    out = []
    for option in options:
        choices = option.get("options")
        if isinstance(choices, list):
            option = {**option, "options": [{renamed.get(k, k): v for k, v in c.items()} for c in choices]}
        out.append({renamed.get(k, k): v for k, v in option.items()})
    return out


def new_session_result(v1: Update) -> Update:
    """`session/new`'s answer on v2: no `modes` (v2 removed them: the mode is a config option)."""
    result = {key: value for key, value in v1.items() if key != "modes"}
    if "configOptions" in result:
        result["configOptions"] = config_options_v2(result["configOptions"])
    return result


def prompt_message_id(turn_id: str) -> str:
    """The id of a turn's prompt: what `session/prompt` answers and `user_message` carries."""
    return f"{turn_id}.0"


def steered_message_id(turn_id: str, seq: int) -> str:
    """The id of a message steered into turn `turn_id`, stored as message `seq` (SPEC §12.7)."""
    return f"{turn_id}.s{seq}"


def _steered(e: PromptSteered) -> Update:
    return {
        "sessionUpdate": "user_message",
        "messageId": steered_message_id(e.turn_id, e.seq),
        "content": [block_to_json(block) for block in e.content],
        "_meta": {"tether": {"steered": True, "afterStep": e.after_step}},
    }


def notice(text: str, **tether: Any) -> Update:
    update: Update = {"sessionUpdate": "notice", "severity": "info", "title": text.strip() or "(notice)"}
    if tether:
        update["_meta"] = {"tether": tether}
    return update


def _diff(p: ChangePreview) -> Update:
    """One change as v2's `diff`: what happens to which path, and the git-style patch."""
    if p.move_to:
        change: Update = {"operation": "move", "oldPath": p.path, "path": p.move_to}
    elif p.old_text is None and p.new_text is not None:
        change = {"operation": "add", "path": p.path}
    elif p.new_text is None:
        change = {"operation": "delete", "path": p.path}
    else:
        change = {"operation": "modify", "path": p.path}
    diff: Update = {"type": "diff", "changes": [change]}
    if p.unified_diff:
        header = f"diff --git a{p.path} b{p.move_to or p.path}\n"
        diff["patch"] = {"format": "git_patch", "text": header + p.unified_diff}
    return diff


def tool_call_content_v2(previews: Iterable[ChangePreview]) -> list[Update]:
    """The v2 content of a call's change previews (what a permission request shows)."""
    return [_diff(p) for p in previews]


def _content(items: Iterable[ToolContent]) -> list[Update]:
    out: list[Update] = []
    for item in items:
        if isinstance(item, TextContent):
            out.append({"type": "content", "content": {"type": "text", "text": item.text}})
        elif isinstance(item, ChangeContent):
            out.append(_diff(item.change))
        elif isinstance(item, BlockContent):
            out.append({"type": "content", "content": block_to_json(item.block)})
        else:
            out.append({"type": "terminal", "terminalId": item.terminal_id})
    return out


def _tool_call(e: ToolCallStarted) -> Update | None:
    if e.parent_call_id is not None:
        return None  # a sub-agent's call: shown on its own session (`subagent_update`)
    update: Update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": e.call_id,
        "title": e.title,
        "kind": e.kind,
        "status": e.status,
    }
    return update


def _patch(e: ToolCallPatch) -> Update | None:
    if e.parent_call_id is not None or e.child_session_id is not None:
        return None  # a sub-agent's call, or its progress under the `delegate` call: on its own session
    update: Update = {"sessionUpdate": "tool_call_update", "toolCallId": e.call_id}
    for key, value in (("status", e.status), ("title", e.title), ("kind", e.kind), ("rawInput", e.raw_input)):
        if value is not None:
            update[key] = value
    if e.cancelled:
        update["status"] = "cancelled"
    if e.cancellable is not None:  # an upsert: `{}` withdraws the cancel it advertised
        update["capabilities"] = {"cancel": {}} if e.cancellable else {}
    if e.content is not None:
        update["content"] = _content(e.content)
    if e.locations is not None:
        update["locations"] = locations(e.locations)
    tether = {
        key: value
        for key, value in (
            ("approvedBy", e.approved_by),
            ("parentCallId", e.parent_call_id),
            ("childSessionId", e.child_session_id),
        )
        if value is not None
    }
    if tether:
        update["_meta"] = {"tether": tether}
    return update


def _terminal_output(e: TerminalOutput) -> Update:
    data = base64.b64encode(e.data.encode("utf-8", "replace")).decode("ascii")
    return {"sessionUpdate": "terminal_output_chunk", "terminalId": e.terminal_id, "data": data}


def _terminal_started(e: TerminalStarted) -> Update:
    """The terminal exists before the call's content refers to it; `capabilities.cancel`
    while it runs (`terminal/cancel`), withdrawn at its exit."""
    return {
        "sessionUpdate": "terminal_update",
        "terminalId": e.terminal_id,
        "command": e.command,
        "cwd": e.cwd,
        "capabilities": {"cancel": {}} if e.cancellable else {},
    }


def _terminal_exit(e: TerminalExited) -> Update:
    status = {"exitCode": e.exit_code, "signal": None if e.exit_code is not None else (e.signal or "SIGKILL")}
    return {"sessionUpdate": "terminal_update", "terminalId": e.terminal_id, "exitStatus": status, "capabilities": {}}


def _state(e: TurnStateChanged) -> Update:
    update: Update = {"sessionUpdate": "state_update", "state": e.state}
    if e.state == "idle":
        update["stopReason"] = e.stop_reason or "end_turn"
        if e.error is not None:
            update["error"] = dict(e.error)
    return update


def subagent_update(e: SubagentChanged) -> Update:
    """The child session on its parent: announced, then its states mirrored (a patch)."""
    update: Update = {"sessionUpdate": "subagent_update", "sessionId": e.session_id}
    if e.title is not None:
        update["title"] = e.title
    if e.description is not None:
        update["description"] = e.description
    if e.cancellable is not None:
        update["capabilities"] = {"cancel": {}} if e.cancellable else {}
    if e.state is not None:
        state = _state(e.state)
        del state["sessionUpdate"]
        update["state"] = state
    update["_meta"] = {"tether": {"parentCallId": e.parent_call_id}}
    return update


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


_STATELESS: dict[type, Callable[[Any], Update | None]] = {
    ToolCallStarted: _tool_call,
    ToolCallPatch: _patch,
    TerminalOutput: _terminal_output,
    TerminalStarted: _terminal_started,
    TerminalExited: _terminal_exit,
    UsageUpdated: lambda e: {"sessionUpdate": "usage_update", "used": e.used, "size": e.size},
    TitleChanged: lambda e: {"sessionUpdate": "session_info_update", "title": e.title},
    Notice: lambda e: notice(e.text),
    ContextCompacted: lambda e: notice(
        f"{e.replaced} earlier messages were summarised to save context: {e.reason}",
        compaction={"replaced": e.replaced},
    ),
    MemoryRecalled: _recalled,
    TurnStateChanged: _state,
    PromptSteered: _steered,
    SubagentChanged: subagent_update,
    TurnEnded: lambda e: {"sessionUpdate": "state_update", "state": "idle", "stopReason": e.stop_reason},
}


class AcpV2:
    """The renderer of one session's updates on a v2 connection: it keeps the current
    message ids (set by `PromptInserted` and `StepStarted`), so chunks carry them."""

    __slots__ = ("_session_id", "_message_id", "_turn_id")

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id
        self._turn_id = ""
        self._message_id = ""

    def chunk(self, kind: str, text: str) -> Update:
        if kind == "thought":
            return {
                "sessionUpdate": "agent_thought_chunk",
                "messageId": f"{self._message_id}.thought",
                "content": {"type": "text", "text": text},
            }
        return {
            "sessionUpdate": "agent_message_chunk",
            "messageId": self._message_id,
            "content": {"type": "text", "text": text},
        }

    def event(self, event: TurnEvent) -> Update | None:
        if isinstance(event, StepStarted):
            self._turn_id = event.turn_id
            self._message_id = f"{event.turn_id}.{event.index}"
            return None
        if isinstance(event, PromptInserted):
            self._turn_id = event.turn_id
            self._message_id = f"{event.turn_id}.1"  # until the first step says otherwise
            content = [block_to_json(block) for block in event.content]
            return {"sessionUpdate": "user_message", "messageId": prompt_message_id(event.turn_id), "content": content}
        if isinstance(event, PlanUpdated):
            entries = [{"content": x.content, "priority": x.priority, "status": x.status} for x in event.entries]
            plan = {"type": "items", "planId": f"{self._session_id}.plan", "entries": entries}
            return {"sessionUpdate": "plan_update", "plan": plan}
        return _STATELESS[type(event)](event)

    def notice(self, text: str) -> Update:
        return notice(text)

    def shaped(self, update: Any) -> Update | None:
        """An update built in v1's shape outside a turn (queue notices, option changes) in
        v2's: options renamed (`configId`, `groupId`); not sent: a mode change (v2 has no
        modes: the option change that comes with it says it) and a queued prompt's text (v2
        shows a prompt once, as `user_message` at its insertion)."""
        body: Update = update if isinstance(update, dict) else to_builtins(update)
        kind = body.get("sessionUpdate")
        if kind == "config_option_update":
            return {**body, "configOptions": config_options_v2(body.get("configOptions") or [])}
        if kind == "current_mode_update":
            return None
        if kind == "user_message_chunk":
            return None
        return body

    def available_commands(self, commands: Iterable[tuple[str, str, str | None]]) -> Update:
        """v2's command list: each typed `command`, an input hint typed `text`."""
        listed: list[Update] = [
            {
                "type": "command",
                "name": name,
                "description": description,
                **({"input": {"type": "text", "hint": hint}} if hint else {}),
            }
            for name, description, hint in commands
        ]
        return {"sessionUpdate": "available_commands_update", "availableCommands": listed}
