"""`/rules` in the chat: the workspace's approval rules, and `/rules remove N`.

Owns: listing the rules (`_tether/rules/list`: each with its number, what it covers and
where it comes from) and removing one the user stored (`_tether/rules/remove`).
Must not: decide what a rule allows (the daemon does) or run while a turn runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .wire import DaemonError, JsonObject

if TYPE_CHECKING:
    from .app import ChatApp

_USAGE = "[/rules lists the approval rules; /rules remove N removes rule #N]"


async def rules_command(chat: ChatApp, rest: str) -> None:
    words = rest.split()
    try:
        if not words:
            chat.transcript.emit(rules_text(chat, await chat.daemon.rules()))
        elif words[0] == "remove" and len(words) == 2 and words[1].lstrip("#").isdigit():
            number = int(words[1].lstrip("#"))
            await chat.daemon.remove_rule(number)
            chat.transcript.notice(f"[rule #{number} removed: what it allowed is asked again]")
        else:
            chat.transcript.notice(_USAGE)
    except DaemonError as exc:
        chat.transcript.notice(f"[rules: {exc.message}]")
    chat.refresh()


def rules_text(chat: ChatApp, rules: list[JsonObject]) -> str:
    """Stored rules first (numbered: `/rules remove N`), then the fixed ones."""
    stored = [r for r in rules if r.get("id") is not None]
    fixed = [r for r in rules if r.get("id") is None]
    lines = [chat.paint.style(f"{len(stored)} approval rules you stored in this workspace", "1")]
    lines += [f"  #{r['id']}  {r.get('decision')}  {_covers(r)}" for r in stored]
    if not stored:
        lines.append('  (none: "allow always" and "reject always" answers add them)')
    lines.append(chat.paint.style("built-in and config rules (not removable here)", "1"))
    lines += [f"  {r.get('decision')}  {_covers(r)}  ({r.get('source')})" for r in fixed]
    if stored:
        lines.append("  /rules remove N removes rule #N")
    return "\n".join(lines)


def _covers(rule: JsonObject) -> str:
    return str(rule.get("scope") or f"{rule.get('kind')} {rule.get('pattern')}")
