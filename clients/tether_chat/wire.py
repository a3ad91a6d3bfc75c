"""The JSON edge of the chat client: the raw-object alias and small readers of it.

Owns: reading text out of ACP content lists; the error a request can end with.
Must not: import anything but the standard library (the start path imports it).
"""

from __future__ import annotations

from typing import Any

JsonObject = dict[str, Any]


class DaemonError(Exception):
    """The daemon answered a request with a JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"error {code}: {message}")
        self.code = code
        self.message = message


def content_text(content: Any) -> str | None:
    """The text of a tool call's `content` blocks (None when it has none)."""
    if not isinstance(content, list):
        return None
    parts = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "content":
            inner = block.get("content") or {}
            if isinstance(inner, dict):
                parts.append(str(inner.get("text", "")))
    return "".join(parts) if parts else None
