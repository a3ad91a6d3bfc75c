"""Provider events with runs of deltas merged: what the model said, whatever the reads were.

An adapter merges the deltas one socket read delivered (providers/batch.py), so how
many `TextDelta`s a reply becomes depends on how the bytes arrived. Tests that check
order and content compare `runs(events)`, which merges consecutive text, plain thinking
and one call's argument deltas the same way, so they hold for any split.
"""

from __future__ import annotations

from tether.providers.base import ProviderEvent, TextDelta, ThinkingDelta, ToolCallArgsDelta


def _key(event: ProviderEvent) -> tuple[str, str] | None:
    if type(event) is TextDelta:
        return ("text", "")
    if type(event) is ThinkingDelta and event.signature is None and event.redacted is None:
        return ("thinking", "")
    if type(event) is ToolCallArgsDelta:
        return ("args", event.call_id)
    return None


def runs(events: list[ProviderEvent]) -> list[ProviderEvent]:
    out: list[ProviderEvent] = []
    last: tuple[str, str] | None = None
    for event in events:
        key = _key(event)
        if key is not None and key == last:
            previous = out[-1]
            if isinstance(previous, ToolCallArgsDelta) and isinstance(event, ToolCallArgsDelta):
                out[-1] = ToolCallArgsDelta(previous.call_id, previous.delta + event.delta)
            elif isinstance(previous, (TextDelta, ThinkingDelta)) and isinstance(event, (TextDelta, ThinkingDelta)):
                out[-1] = type(previous)(previous.text + event.text)
            continue
        out.append(event)
        last = key
    return out
