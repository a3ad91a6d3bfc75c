"""A running command's output, shown while it runs.

Owns: turning the chunks a tool streams (`ToolContext.on_output`) into sink events:
the tail of the output as the call's content, or terminal output the client appends.
Must not: keep more than the shown tail, or know any wire shape.
"""

from __future__ import annotations

from .sink import TerminalOutput, TextContent, ToolCallPatch, TurnSink

# Streamed command output shown while it runs: the last this-many characters.
LIVE_OUTPUT_CHARS = 64 * 1024


class TerminalStream:
    """Command output for a client that shows it in a terminal (appended by the client)."""

    __slots__ = ("sink", "call_id")

    def __init__(self, sink: TurnSink, call_id: str) -> None:
        self.sink, self.call_id = sink, call_id

    def add(self, text: str) -> None:
        self.sink.emit(TerminalOutput(self.call_id, self.call_id, text))


class OutputTail:
    """Streams a running command's output as the call's content (the tail of it: each
    update replaces the previous content, so sending everything would be O(n^2))."""

    __slots__ = ("sink", "call_id", "parts", "size", "dropped")

    def __init__(self, sink: TurnSink, call_id: str) -> None:
        self.sink, self.call_id = sink, call_id
        self.parts: list[str] = []
        self.size = 0
        self.dropped = 0

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.size > 2 * LIVE_OUTPUT_CHARS:
            joined = "".join(self.parts)
            self.dropped += len(joined) - LIVE_OUTPUT_CHARS
            self.parts, self.size = [joined[-LIVE_OUTPUT_CHARS:]], LIVE_OUTPUT_CHARS
        shown = "".join(self.parts)[-LIVE_OUTPUT_CHARS:]
        if self.dropped:
            shown = f"[... {self.dropped} earlier characters not shown ...]\n" + shown
        self.sink.emit(ToolCallPatch(self.call_id, content=(TextContent(shown),)))
