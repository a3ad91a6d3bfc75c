"""Completion in the input (`/name`, `@path`) and a message's `@path` attachments.

Owns: what is offered after `/` (the daemon's commands and the chat's) and after `@`
(workspace paths), and turning sent `@path` words into embedded file blocks. Must not: read
outside the workspace, or look at more than 200 entries per completion.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path

    from prompt_toolkit.document import Document

    from .wire import JsonObject

CHAT_COMMANDS = {
    "search": "search every stored session of this workspace",
    "resume": "pick a stored session to continue",
    "new": "start a new session",
    "rules": "list the approval rules; /rules remove N removes rule #N",
    "steer": "send a message into the running turn (also Ctrl-S)",
    "dequeue": "withdraw the last message queued behind the running turn",
    "quit": "leave tether chat",
}
_SKIP = {".git", "node_modules", "__pycache__", ".venv", ".tether"}
_MAX_ENTRIES = 200
_MAX_ATTACH = 256 * 1024
_AT = re.compile(r"(?:^|(?<=\s))@(\S+)")


class ChatCompleter(Completer):
    def __init__(self, workspace: Path, commands: Callable[[], list[JsonObject]]) -> None:
        self.workspace = workspace
        self.commands = commands

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        before = document.text_before_cursor
        if before.startswith("/") and " " not in before:
            yield from self._slash(before[1:])
            return
        word = before.split()[-1] if before and not before[-1].isspace() else ""
        if word.startswith("@"):
            yield from self._paths(word[1:])

    def _slash(self, typed: str) -> Iterable[Completion]:
        offered = [(str(c.get("name")), str(c.get("description") or "")) for c in self.commands()]
        offered += [(name, f"{text} (chat)") for name, text in CHAT_COMMANDS.items()]
        for name, text in offered:
            if name.startswith(typed):
                yield Completion(name, start_position=-len(typed), display="/" + name, display_meta=text[:50])

    def _paths(self, typed: str) -> Iterable[Completion]:
        folder, _, prefix = typed.rpartition("/")
        base = (self.workspace / folder).resolve()
        if not base.is_dir() or not base.is_relative_to(self.workspace):
            return
        try:
            entries = sorted(os.scandir(base), key=lambda e: e.name)[:_MAX_ENTRIES]
        except OSError:
            return
        for entry in entries:
            if not entry.name.startswith(prefix) or entry.name in _SKIP:
                continue
            if entry.name.startswith(".") and not prefix.startswith("."):
                continue
            name = (f"{folder}/" if folder else "") + entry.name + ("/" if entry.is_dir() else "")
            yield Completion(name, start_position=-len(typed), display=name)


def attachments(text: str, workspace: Path) -> list[JsonObject]:
    """Embedded `resource` blocks for the message's `@path` words that name files in the workspace."""
    blocks: list[JsonObject] = []
    seen: set[Path] = set()
    for match in _AT.finditer(text):
        path = (workspace / match.group(1).rstrip(".,;:!?)")).resolve()
        if path in seen or not path.is_file() or not path.is_relative_to(workspace):
            continue
        seen.add(path)
        try:
            data = path.read_bytes()[:_MAX_ATTACH].decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        blocks.append({"type": "resource", "resource": {"uri": path.as_uri(), "text": data, "mimeType": "text/plain"}})
    return blocks
