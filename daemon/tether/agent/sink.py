"""What the agent loop reports while a turn runs; the server turns it into ACP updates."""

from __future__ import annotations

from typing import Any, Protocol


class TurnSink(Protocol):
    def text(self, delta: str) -> None: ...

    def thought(self, delta: str) -> None: ...

    def tool_call(
        self,
        call_id: str,
        *,
        title: str,
        kind: str,
        status: str,
        raw_input: dict[str, Any] | None = None,
        locations: list[dict[str, Any]] | None = None,
    ) -> None: ...

    def tool_call_update(
        self,
        call_id: str,
        *,
        status: str | None = None,
        title: str | None = None,
        kind: str | None = None,
        raw_input: dict[str, Any] | None = None,
        content_text: str | None = None,
        locations: list[dict[str, Any]] | None = None,
        content_blocks: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None: ...

    def plan(self, entries: list[dict[str, Any]]) -> None: ...

    def update(self, update: dict[str, Any]) -> None:
        """Any other ACP session update, sent in order."""
        ...

    def usage(self, used: int, size: int) -> None: ...

    def title(self, title: str) -> None: ...

    def notice(self, text: str) -> None:
        """Tell the user something about the turn itself (not the model's words)."""
        ...

    def flush(self) -> None: ...
