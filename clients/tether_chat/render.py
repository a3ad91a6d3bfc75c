"""The transcript as terminal text: streaming Markdown, thinking, tool cards, plans, usage.

Owns: turning `session/update`s into ANSI text: finished text to the scrollback
(`Transcript.take`), what still streams to the live area (`Transcript.live`); colour only
with a colour terminal and NO_COLOR unset. Must not: talk to the daemon, read keys, or keep
more than the turn's open pieces (no O(history) work per update).
"""

from __future__ import annotations

import io
import os
from typing import Any

from .wire import JsonObject, content_text

_LIVE_OUTPUT_LINES = 4
_CARD_LINES = 6


class Blocks:
    """The open Markdown of a message, cut into finished blocks as it streams: a block ends
    at a blank line outside a code fence, or at the line that closes a fence. Each chunk
    is scanned once (a long code block streaming in costs its length, not its square)."""

    def __init__(self) -> None:
        self.text = ""
        self._scanned = 0  # lines before this are classified
        self._fence: str | None = None

    def add(self, chunk: str) -> str:
        """Add ``chunk``; the finished blocks it completed (taken out of `text`)."""
        self.text += chunk
        done = 0
        while True:
            end = self.text.find("\n", self._scanned)
            if end < 0:
                break
            line = self.text[self._scanned : end].strip()
            self._scanned = end + 1
            if self._fence is None and line[:3] in ("```", "~~~"):
                self._fence = line[:3]
            elif self._fence is not None and line.startswith(self._fence) and line.strip("`~") == "":
                self._fence = None
                done = self._scanned
            elif self._fence is None and not line:
                done = self._scanned
        finished, self.text = self.text[:done], self.text[done:]
        self._scanned -= done
        return finished

    def take(self) -> str:
        """The rest, as it is (the message ended)."""
        rest, self.text, self._scanned, self._fence = self.text, "", 0, None
        return rest


class Painter:
    """rich, rendering to a string at the terminal's width (colour or none)."""

    def __init__(self, color: bool) -> None:
        self.color = color
        self.width = 80

    def warm(self) -> None:
        """Import rich ahead of the first answer (it is not needed for the prompt)."""
        self.markdown("*warm*\n\n```python\npass\n```\n")

    def _console(self) -> Any:
        from rich.console import Console

        return Console(
            file=io.StringIO(),
            force_terminal=self.color,
            no_color=not self.color,
            color_system="256" if self.color else None,
            width=self.width,
            highlight=False,
            emoji=False,
            legacy_windows=False,
        )

    def markdown(self, text: str) -> str:
        from rich.markdown import Markdown

        if not text.strip():
            return ""
        console = self._console()
        console.print(Markdown(text, code_theme="monokai"))
        return str(console.file.getvalue())

    def style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def diff_line(self, line: str) -> str:
        if line.startswith("+") and not line.startswith("+++"):
            return self.style(line, "32")
        if line.startswith("-") and not line.startswith("---"):
            return self.style(line, "31")
        if line.startswith("@@"):
            return self.style(line, "36")
        return line


class Card:
    """One tool call as it runs."""

    def __init__(self, call_id: str, title: str, kind: str) -> None:
        self.id = call_id
        self.title = title
        self.kind = kind
        self.status = "pending"
        self.output = ""
        self.unasked = ""  # why it ran without a prompt (sandbox-aware asking), shown on the card


class Slot:
    """A place kept in the transcript for text that comes later (a turn's end line, whose
    numbers need a request, while the next turn already streams)."""

    def __init__(self) -> None:
        self.text: str | None = None


class Transcript:
    """What the user sees of a session, fed update by update."""

    def __init__(self, painter: Painter) -> None:
        self.paint = painter
        self._out: list[str | Slot] = []
        self.blocks = Blocks()  # the open Markdown of the current message
        self.thought = ""
        self.last_thought = ""
        self.cards: dict[str, Card] = {}
        self.commands: list[JsonObject] = []
        self.mode: str | None = None
        self.used: tuple[int, int] | None = None
        self.title: str | None = None
        self.turn_ended: JsonObject | None = None
        self.replay_ends: list[Slot] | None = None  # while a session/load replays: old turns' end lines
        self._replayed_turns = 0
        self._in_user = False

    def take(self) -> str:
        """What is finished since the last call (for the scrollback)."""
        out: list[str] = []
        while self._out:
            item = self._out[0]
            if isinstance(item, Slot):
                if item.text is None:
                    break  # what follows waits for it
                item = item.text
            out.append(item)
            self._out.pop(0)
        return "".join(out)

    def reserve(self) -> Slot:
        slot = Slot()
        self._out.append(slot)
        return slot

    def emit(self, text: str) -> None:
        if text:
            self._out.append(text if text.endswith("\n") else text + "\n")

    def user(self, text: str) -> None:
        self.flush()
        self.emit(self.paint.style("› " + text.replace("\n", "\n  "), "1"))

    def notice(self, text: str) -> None:
        self.flush()
        self.emit(self.paint.style(text.strip(), "2"))

    def update(self, update: JsonObject) -> None:
        kind = update.get("sessionUpdate")
        if self.replay_ends is not None:
            self._replayed(update)
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(update)

    def start_replay(self) -> None:
        self.replay_ends, self._replayed_turns, self._in_user = [], 0, False

    def _replayed(self, update: JsonObject) -> None:
        """A replayed user message (not steered) after other updates begins a turn: the
        turn before it gets a place for its end line."""
        user = update.get("sessionUpdate") == "user_message_chunk"
        steered = ((update.get("_meta") or {}).get("tether") or {}).get("steered")
        if user and not steered and not self._in_user:
            if self._replayed_turns and self.replay_ends is not None:
                self.flush()
                self.replay_ends.append(self.reserve())
            self._replayed_turns += 1
        self._in_user = user

    def end_replay(self) -> list[Slot]:
        """The replay is over: a place for each replayed turn's end line, oldest first."""
        slots = self.replay_ends or []
        if self._replayed_turns:
            self.flush()
            slots.append(self.reserve())
        self.replay_ends = None
        return slots

    def _on_agent_message_chunk(self, update: JsonObject) -> None:
        self._end_thought()
        text = str(update.get("content", {}).get("text", ""))
        if (update.get("_meta") or {}).get("tether", {}).get("notice"):
            self.notice(text)
            return
        self.emit(self.paint.markdown(self.blocks.add(text)))

    def _on_user_message_chunk(self, update: JsonObject) -> None:
        content = update.get("content") or {}
        steered = ((update.get("_meta") or {}).get("tether") or {}).get("steered")
        if steered and content.get("type") == "text":
            step = ((update.get("_meta") or {}).get("tether") or {}).get("afterStep")
            self.flush()
            self.emit(self.paint.style(f"you (steered in after step {step}):", "2"))
            self.user(str(content.get("text", "")))
        elif content.get("type") == "text":
            self.user(str(content.get("text", "")))
        else:  # an attached file (`resource`, `resource_link`): its name, not its text
            uri = str((content.get("resource") or {}).get("uri") or content.get("uri") or "")
            self.attached(uri.rpartition("/")[2] or uri)

    def attached(self, name: str) -> None:
        self.emit(self.paint.style(f"  + attached {name}", "2"))

    def _on_agent_thought_chunk(self, update: JsonObject) -> None:
        self.thought += str(update.get("content", {}).get("text", ""))

    def _end_thought(self) -> None:
        if self.thought:
            words = len(self.thought.split())
            self.last_thought, self.thought = self.thought, ""
            self.emit(self.paint.style(f"▸ thought ({words} words; Ctrl-O shows it)", "2;3"))

    def flush(self) -> None:
        """The open message as it is (a tool call or the turn's end closes it)."""
        self._end_thought()
        if self.blocks.text:
            self.emit(self.paint.markdown(self.blocks.take()))

    def _on_tool_call(self, update: JsonObject) -> None:
        self.flush()
        call_id = str(update.get("toolCallId"))
        self.cards[call_id] = Card(call_id, str(update.get("title") or call_id), str(update.get("kind") or "other"))
        self._on_tool_call_update(update)

    def _on_tool_call_update(self, update: JsonObject) -> None:
        call_id = str(update.get("toolCallId"))
        card = self.cards.get(call_id)
        if card is None:
            card = self.cards[call_id] = Card(call_id, call_id, "other")
        if update.get("title"):
            card.title = str(update["title"])
        if update.get("status"):
            card.status = str(update["status"])
        approved = str(((update.get("_meta") or {}).get("tether") or {}).get("approvedBy") or "")
        if approved.startswith("allowed without asking"):
            card.unasked = approved
        text = content_text(update.get("content"))
        if text is not None and card.kind == "execute":
            card.output = text
        if card.status in ("completed", "failed"):
            del self.cards[call_id]
            self._close_card(card, text or "")

    def _close_card(self, card: Card, result: str) -> None:
        ok = card.status == "completed"
        mark = self.paint.style("✓", "32") if ok else self.paint.style("✗", "31")
        lines = [f"╭ {mark} {self.paint.style(card.title, '1')}"]
        if card.unasked:
            lines.append("│ " + self.paint.style(card.unasked, "2"))
        body = result.splitlines()
        for line in body[:_CARD_LINES]:
            lines.append("│ " + self.paint.diff_line(line[: self.paint.width - 4]))
        more = f" … {len(body) - _CARD_LINES} more lines" if len(body) > _CARD_LINES else ""
        lines.append("╰" + self.paint.style(more, "2"))
        self.emit("\n".join(lines))

    def _on_plan(self, update: JsonObject) -> None:
        self.flush()
        marks = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}
        lines = [self.paint.style("Plan", "1")]
        for entry in update.get("entries") or []:
            lines.append(f"  {marks.get(entry.get('status'), '[ ]')} {entry.get('content', '')}")
        self.emit("\n".join(lines))

    def _on_usage_update(self, update: JsonObject) -> None:
        self.used = (int(update.get("used", 0)), int(update.get("size", 0)))

    def _on_current_mode_update(self, update: JsonObject) -> None:
        self.mode = str(update.get("currentModeId"))

    def _on_available_commands_update(self, update: JsonObject) -> None:
        self.commands = list(update.get("availableCommands") or [])

    def _on_session_info_update(self, update: JsonObject) -> None:
        if update.get("title"):
            self.title = str(update["title"])
        ended = ((update.get("_meta") or {}).get("tether") or {}).get("turnEnded")
        if ended:
            self.turn_ended = ended

    def live(self) -> str:
        """The open pieces: running tool calls with their last output lines, then the
        streaming tail of the message (or that the model is thinking)."""
        lines: list[str] = []
        for card in self.cards.values():
            lines.append(f"╭ {self.paint.style('…', '33')} {card.title}")
            for line in card.output.splitlines()[-_LIVE_OUTPUT_LINES:]:
                lines.append("│ " + line[: self.paint.width - 4])
        if self.thought:
            lines.append(self.paint.style(f"thinking… ({len(self.thought)} characters)", "2;3"))
        if self.blocks.text:
            lines.extend(self.blocks.text[-4000:].splitlines()[-6:])
        return "\n".join(lines)

    def end_line(self, stop: str, report: JsonObject | None, slot: Slot | None = None) -> None:
        """The turn's end and its numbers (in ``slot`` when one was kept for it)."""
        if slot is not None:
            slot.text = self.end_text(stop, report) + "\n"
            return
        self.flush()
        self.emit(self.end_text(stop, report))

    def end_text(self, stop: str, report: JsonObject | None) -> str:
        facts = [stop]
        if report:
            usage = report.get("totalUsage") or {}
            facts += [
                _count(int(report.get("stepCount", 0)), "step"),
                _count(int(report.get("toolCallCount", 0)), "tool call"),
                f"{usage.get('inputTokens', 0)}+{usage.get('outputTokens', 0)} tokens",
                f"{float(report.get('totalMs', 0)):.0f} ms",
            ]
        return self.paint.style(f"[{' · '.join(facts)}]", "2")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def colour_wanted(isatty: bool) -> bool:
    return isatty and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
