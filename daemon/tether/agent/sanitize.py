"""Cleaning the model's visible text, for whole messages and for streamed deltas alike.

Owns: the seven-step output pipeline (seed 003 §3) as `sanitize(text)` and `StreamSanitizer`,
identical however the stream is split; its code rules and latency bound:
docs/decisions/0011-agent.md. Must not: know about sinks, providers or sessions, or hold
back ordinary prose.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .sanitize_lines import PARAGRAPH_CAP, Dedup, Leading, Lines, Markers

__all__ = ["MAX_TAG", "PARAGRAPH_CAP", "StreamSanitizer", "sanitize"]

MAX_TAG = 64  # `<` to `>` of any tag we handle; longer is plain text

_XML_TAG = re.compile(r"<(/?)([A-Za-z][\w:.-]*)([\s=][^<>]*)?>")
_TOKEN = re.compile(r"<[|｜]([^|｜<>\s]+)[|｜]>")  # <|tool_call_begin|>, <｜tool▁sep｜>

# A stage's verdict on a tag: None = literal text, empty = drop the tag only, otherwise
# the (closing, name) tags that end the block it opens.
Verdict = frozenset[tuple[bool, str]] | None
Classify = Callable[[bool, str, str], Verdict]
_DROP: frozenset[tuple[bool, str]] = frozenset()

_TOOL_BLOCKS = {"tool_call", "tool_calls", "function_call", "function_calls", "tool_use", "minimax:tool_call"}
_TOKEN_BLOCKS = {"|tool_calls_section_begin", "|tool_calls_begin", "|tool_call_begin"}
_THINK = {"think", "thinking", "thought", "antthinking"}
_THINK_END = frozenset((True, name) for name in _THINK)


def _parse(tag: str) -> tuple[bool, str, str] | None:
    if m := _XML_TAG.fullmatch(tag):
        return bool(m[1]), m[2].lower(), m[3] or ""
    if m := _TOKEN.fullmatch(tag):  # DeepSeek spells its tokens with fullwidth bars and ▁
        return False, "|" + m[1].lower().replace("▁", "_"), ""
    return None


def _garbled(closing: bool, name: str, attrs: str) -> Verdict:
    if name.startswith("|"):
        if name in _TOKEN_BLOCKS:
            return frozenset({(False, name.removesuffix("begin") + "end")})
        return _DROP if name.startswith("|tool_") else None
    if closing:  # a stray </function> may close ordinary XML, so only tool-call closers go
        return _DROP if name in _TOOL_BLOCKS else None
    # bare <function> / <parameter> are ordinary XML; the leaked forms carry =name or attrs
    opens = name in _TOOL_BLOCKS or (name == "function" and attrs.startswith("="))
    return frozenset({(True, name)}) if opens or (name == "parameter" and attrs.strip()) else None


def _thinking(closing: bool, name: str, attrs: str) -> Verdict:
    # any thinking closer ends the block: models mix <thinking> and </think>
    return None if name not in _THINK else _DROP if closing else _THINK_END


def _final(closing: bool, name: str, attrs: str) -> Verdict:
    return _DROP if name in ("final", "answer") else None


class _Tags(Lines):
    """Steps 1, 3, 4: tags that open a dropped (or thought) block, or are dropped alone."""

    spans = True

    def __init__(
        self,
        classify: Classify,
        heads: tuple[str, ...],
        end_heads: tuple[str, ...],
        thought: bool = False,
        glued: bool = True,
    ) -> None:
        super().__init__()
        # heads: lower-case starts that every tag we act on begins with, so a partial
        # `<...` that matches none of them is plain text at once
        self.classify, self.heads, self.end_heads, self.thought = classify, heads, end_heads, thought
        # glued=False: a capitalised opening tag right after a letter, digit or `_` is
        # text, a generic type in prose (`List<Thought>`, `Option<Answer>`), not a tag
        # (models write theirs in lower or upper case: `b<thought>`, `<THINKING>`)
        self.glued = glued

    def reset(self) -> None:
        super().reset()
        self.prev = ""  # the character before this feed's text, as the model wrote it
        self.buf = ""
        self.block: frozenset[tuple[bool, str]] | None = None

    def feed(self, s: str, final: bool = False) -> tuple[str, str]:
        if not self.buf and self.block is None and "<" not in s:  # the hot path
            self._track(s)
            if s:
                self.prev = s[-1]
            return s, ""
        data, self.buf = self.buf + s, ""
        out: list[str] = []
        thought: list[str] = []
        pos, n = 0, len(data)
        while pos < n:
            lt = data.find("<", pos)
            end = n if lt < 0 else lt
            if self.block is None:
                out.append(data[pos:end])
                self._track(data[pos:end])
            elif self.thought:
                thought.append(data[pos:end])
            pos, tag = end, ""
            if lt < 0:
                break
            if self.block is not None or not self.in_code():
                window = data[pos : pos + MAX_TAG]
                gt, low = window.find(">"), window.lower()
                heads = self.heads if self.block is None else self.end_heads
                if gt >= 0:
                    tag = window[: gt + 1]
                elif not final and len(window) < MAX_TAG and any(h.startswith(low) or low.startswith(h) for h in heads):
                    self.buf = data[pos:]  # may still become a tag: wait for more
                    break
            parsed = self._parsed(data, pos, tag)
            if self.block is None and (verdict := self.classify(*parsed) if parsed else None) is not None:
                self.block, pos = verdict or None, pos + len(tag)
            elif self.block is not None and parsed and parsed[:2] in self.block:
                self.block, pos = None, pos + len(tag)
            else:  # a literal `<`
                if self.block is None:
                    out.append("<")
                    self._track("<")
                elif self.thought:
                    thought.append("<")
                pos += 1
        kept = len(data) - len(self.buf)  # what is held comes again with the next feed
        if kept:
            self.prev = data[kept - 1]
        return "".join(out), "".join(thought)

    def _parsed(self, data: str, pos: int, tag: str) -> tuple[bool, str, str] | None:
        """The tag at ``pos`` parsed; None if it is text (no tag, or with ``glued`` off a
        capitalised opening tag right after a word: a generic type, ``List<Thought>``)."""
        parsed = _parse(tag) if tag else None
        if parsed and not self.glued and not parsed[0] and self.block is None and _pascal(tag):
            before = data[pos - 1] if pos else self.prev
            if before.isalnum() or before == "_":
                return None
        return parsed


def _pascal(tag: str) -> bool:
    """Whether the tag's name is capitalised as a type's is: `<Thought>`, not `<THINK>`."""
    name = tag[1:].split(">", 1)[0].split(None, 1)[0] if len(tag) > 2 else ""
    return name[:1].isupper() and not name.isupper()


class StreamSanitizer:
    """The pipeline for one streamed message: `feed` each text delta, then `finish`.

    Both return (text to emit now, thought to emit now); see the module docstring for
    what may be held back. After `finish` (or a stream that broke off), `reset` makes it
    ready for the next message: a session's turns keep one (services/turn_setup.py).
    """

    def __init__(self) -> None:
        self._garbled = _Tags(
            _garbled,
            (
                "<tool_",
                "</tool_",
                "<function",
                "</function",
                "<parameter",
                "</parameter",
                "<minimax:",
                "</minimax:",
                "<|tool",
                "<｜tool",
            ),
            ("</tool_", "</function", "</parameter", "</minimax:", "<|tool", "<｜tool"),
        )
        self._downgraded = Markers(("[tool call:", "[tool result", "[historical context:"))
        think_ends = ("</think", "</thought", "</antthinking")
        self._thinking = _Tags(
            _thinking, ("<think", "<thought", "<antthinking", *think_ends), think_ends, thought=True, glued=False
        )
        self._final = _Tags(_final, ("<final", "</final", "<answer", "</answer"), (), glued=False)
        self._echoed = Markers(("[system message]",))
        self._dedup = Dedup()
        self._leading = Leading()

    def reset(self) -> None:
        for stage in (self._garbled, self._downgraded, self._thinking, self._final, self._echoed, self._dedup):
            stage.reset()
        self._leading.reset()

    def feed(self, delta: str) -> tuple[str, str]:
        return self._run(delta, False)

    def finish(self) -> tuple[str, str]:
        return self._run("", True)

    def _run(self, s: str, final: bool) -> tuple[str, str]:
        s = self._garbled.feed(s, final)[0]
        s = self._downgraded.feed(s, final)
        s, thought = self._thinking.feed(s, final)
        s = self._final.feed(s, final)[0]
        s = self._echoed.feed(s, final)
        s = self._dedup.feed(s, final)
        return self._leading.feed(s, final), thought


def sanitize(text: str) -> tuple[str, str]:
    """(clean text, extracted thought) for a whole message; equal to streaming it."""
    stream = StreamSanitizer()
    text_now, thought_now = stream.feed(text)
    text_end, thought_end = stream.finish()
    return text_now + text_end, thought_now + thought_end
