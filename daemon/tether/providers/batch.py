"""One socket read's provider events, with runs of deltas of one kind merged into one event.

Owns: `Batch`: consecutive text, plain thinking, or one call's argument deltas become one event; any other
event ends the run, so order is kept (why: docs/decisions/0005-providers.md).
Must not: merge across reads, reorder events, or merge a thinking delta carrying a signature or redacted data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import ProviderEvent, TextDelta, ThinkingDelta, ToolCallArgsDelta

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

_TEXT, _THINKING = "\x00text", "\x00thinking"  # run kinds; any other is a tool call's id


class Batch:
    """`text`, `thinking`, `args`, `add`; then `take()` the events (the run is closed)."""

    __slots__ = ("events", "_kind", "_parts", "_text_out")

    def __init__(self, text_out: Callable[[str], Iterable[ProviderEvent]] | None = None) -> None:
        self.events: list[ProviderEvent] = []
        self._kind = ""
        self._parts: list[str] = []
        # what a run of text becomes (OpenAI's `<think>` splitter); plain TextDelta otherwise
        self._text_out = text_out

    def text(self, s: str) -> None:
        if self._kind != _TEXT:
            self.close_run()
            self._kind = _TEXT
        self._parts.append(s)

    def thinking(self, s: str) -> None:
        if self._kind != _THINKING:
            self.close_run()
            self._kind = _THINKING
        self._parts.append(s)

    def args(self, call_id: str, s: str) -> None:
        if not call_id:  # no id to key a run by (a server's empty id): as it came
            self.add(ToolCallArgsDelta(call_id, s))
            return
        if self._kind != call_id:
            self.close_run()
            self._kind = call_id
        self._parts.append(s)

    def add(self, event: ProviderEvent) -> None:
        if self._kind:
            self.close_run()
        self.events.append(event)

    def extend(self, events: Iterable[ProviderEvent]) -> None:
        for event in events:
            self.add(event)

    def close_run(self) -> None:
        kind, self._kind = self._kind, ""
        if not kind:
            return
        joined = "".join(self._parts)
        self._parts.clear()
        if kind == _TEXT:
            if self._text_out is not None:
                self.events.extend(self._text_out(joined))
            else:
                self.events.append(TextDelta(joined))
        elif kind == _THINKING:
            self.events.append(ThinkingDelta(joined))
        else:
            self.events.append(ToolCallArgsDelta(kind, joined))

    def take(self) -> list[ProviderEvent]:
        """The events so far (the open run closed); the batch starts empty again."""
        self.close_run()
        events, self.events = self.events, []
        return events
