"""The Markdown transcript of a session started from a stock LSP client.

Owns: its place (`<data dir>/workspaces/<key>/transcripts/<session>.md`, never in the workspace)
and appending one turn: question, answer with its tool calls, plan, how it ended.
Must not: send anything, or read the history database.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...store.paths import database_path

if TYPE_CHECKING:
    from pathlib import Path

_MARKS = {"completed": "done", "failed": "failed", "pending": "not run", "in_progress": "stopped"}


@dataclass(slots=True)
class Call:
    title: str
    status: str = "pending"
    detail: str = ""  # the first line of why it failed


@dataclass(slots=True)
class TurnRecord:
    """One turn as the transcript shows it; `items` are text or the id of a call."""

    prompt: str
    items: list[str | Call] = field(default_factory=list)
    plan: list[str] = field(default_factory=list)
    stop_reason: str = ""

    def markdown(self) -> str:
        body: list[str] = []
        for item in self.items:
            if isinstance(item, Call):
                detail = f": {item.detail}" if item.detail else ""
                body.append(f"\n> **{item.title}** ({_MARKS.get(item.status, item.status)}{detail})\n\n")
            else:
                body.append(item)
        text = "".join(body).strip() or "_(no answer)_"
        parts = ["## You", "", self.prompt.strip(), "", "## Tether", "", text, ""]
        if self.plan:
            parts += ["**Plan**", "", *self.plan, ""]
        if self.stop_reason and self.stop_reason != "end_turn":
            parts += [f"_(the turn ended: {self.stop_reason})_", ""]
        return "\n".join(parts) + "\n"


def transcript_path(workspace: Path, session_id: str, home: Path | None) -> Path:
    """The session's transcript file (its folder is made, private, if needed)."""
    folder = database_path(workspace, home).parent / "transcripts"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder / f"{session_id}.md"


def append_turn(path: Path, workspace: Path, session_id: str, turn: TurnRecord) -> int:
    """Append `turn` to the transcript (with a heading when it is new); the 0-based line
    where the turn's section starts."""
    try:
        before = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        before = f"# Tether session {session_id}\n\nWorkspace: `{workspace}`\n\n"
    start = before.count("\n")
    text = before + turn.markdown()
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(tmp, path)
    return start
