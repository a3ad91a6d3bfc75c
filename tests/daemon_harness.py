"""What the end-to-end tests share: how to start the daemon and read its updates."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
BASIC_SCRIPT = EXAMPLES / "basic-turn.json"


def serve_command(*extra: str, script: Path = BASIC_SCRIPT) -> list[str]:
    return [
        sys.executable, "-m", "tether", "serve",
        "--provider", "scripted", "--script", str(script), *extra,
    ]


def kinds(updates: list[dict]) -> list[str]:
    """Update kinds with consecutive repeats of text/thought chunks collapsed."""
    out: list[str] = []
    for update in updates:
        kind = update["sessionUpdate"]
        if out and out[-1] == kind and kind in ("agent_message_chunk", "agent_thought_chunk"):
            continue
        out.append(kind)
    return out


def text_of(updates: list[dict], kind: str = "agent_message_chunk") -> str:
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == kind)
