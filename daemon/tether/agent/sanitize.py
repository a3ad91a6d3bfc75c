"""Cleaning the model's visible text, for whole messages and for streamed deltas alike.

Owns: the seven-step output pipeline (seed 003, section 3) — 1 garbled tool-call XML,
2 downgraded tool-call text, 3 thinking tags moved to a thought channel, 4 final/answer
wrappers, 5 echoed system messages, 6 stuttered duplicate paragraphs, 7 leading blank
lines — as `sanitize(text)` and as `StreamSanitizer`.
Must not: know about sinks, providers or sessions, or hold back ordinary prose.

Each step is a small streaming stage (feed/finish) whose output does not depend on how
its input was split; `sanitize` runs the same stages over the whole text, so streamed
and whole-text results are identical by construction (the tests check it with random
split points). Code is respected: inside fenced blocks (``` or ~~~, closed only by a
fence as long) and inline code spans (`...`, ``...``; ended by their line at the latest)
nothing is a tag, inside fences nothing is a marker, and repeated paragraphs inside
fences are kept.

Latency bound of `StreamSanitizer.feed`: text comes out in the same call unless it is
- a `<` that may still become a tag we handle (held until decided, < 64 chars);
- a `[` starting a line that may still become a marker (< 20 chars);
- whitespace starting a line, until the line shows a character; blank lines, until
  the next paragraph starts (dropping a repeated paragraph drops its separator too);
- a paragraph that so far repeats the previous paragraph exactly (held until it
  differs or ends; never more than 2,000 chars), and the message's leading whitespace.
Thinking is emitted as thought as it arrives, except a possible closing tag (< 64).
Deliberate limits: a stray `</think>` is dropped (not "everything before was
thought"), marker blocks end at the next blank line, and trailing whitespace is kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable

MAX_TAG = 64  # `<` to `>` of any tag we handle; longer is plain text
PARAGRAPH_CAP = 2_000  # a longer paragraph is never held to check for a repeat

_XML_TAG = re.compile(r"<(/?)([A-Za-z][\w:.-]*)([\s=][^<>]*)?>")
_TOKEN = re.compile(r"<[|｜]([^|｜<>\s]+)[|｜]>")  # <|tool_call_begin|>, <｜tool▁sep｜>
_NOT_BLANK = re.compile(r"[^ \t\r]")

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


_FENCE = re.compile(r"(`{3,}|~{3,})(.*)", re.DOTALL)
_FENCE_HEAD = 80  # how much of a line's start is kept to tell a fence line
_TICKS = re.compile("`+")


class _Lines:
    """Follows code as Markdown marks it, in the text that went past: fenced blocks
    (a line starting with 3+ backticks or tildes opens one, only a line of at least as
    many of the same closes it, when the line ends) and inline code spans (a run of
    backticks opens one, the next run of the same length closes it; a span ends with its
    line at the latest, so a lone backtick cannot hold everything after it as code)."""

    spans = False  # whether inline spans matter to the stage (tags do; lines do not)

    def __init__(self) -> None:
        self.fence: tuple[str, int] | None = None  # the open fence's character and length
        self.head = ""  # the current line's start, leading blanks stripped
        self.span = 0  # the open inline span's backtick count (0: none)
        self.run = 0  # backticks just seen, the run perhaps not over yet

    def in_code(self) -> bool:
        """Whether text that comes next (not a backtick) is code."""
        if self.fence is not None:
            return True
        if self.run:  # the run ends here: it opens a span, or closes the open one
            return self.span == 0 or self.span != self.run
        return self.span > 0

    def _track(self, seg: str) -> bool:
        """Follow ``seg``; whether a fence opened or closed in it."""
        toggled, start = False, 0
        while True:
            nl = seg.find("\n", start)
            part = seg[start:] if nl < 0 else seg[start:nl]
            if len(self.head) < _FENCE_HEAD:
                self.head = (self.head + part if self.head else part.lstrip(" \t"))[:_FENCE_HEAD]
            if self.spans and (self.fence is None and "`" in part or self.run):
                self._spans(part)
            if nl < 0:
                return toggled
            toggled = self._line_ends() or toggled
            start = nl + 1

    def _spans(self, part: str) -> None:
        pos = 0
        for m in _TICKS.finditer(part):
            if self.run and m.start() != pos:
                self._run_ends()
            self.run += m.end() - m.start()
            pos = m.end()
        if self.run and pos != len(part):
            self._run_ends()
        # else a run at the end of the part may go on in the next one

    def _run_ends(self) -> None:
        run, self.run = self.run, 0
        if self.span == 0:
            self.span = run
        elif self.span == run:
            self.span = 0

    def _line_ends(self) -> bool:
        head, self.head, self.span, self.run = self.head, "", 0, 0
        m = _FENCE.match(head)
        if m is None:
            return False
        char, length, rest = m[1][0], len(m[1]), m[2]
        if self.fence is None:
            if char == "`" and "`" in rest:  # ``` `x` is inline code, not a fence
                return False
            self.fence = (char, length)
            return True
        if char == self.fence[0] and length >= self.fence[1] and not rest.strip():
            self.fence = None
            return True
        return False


class _Tags(_Lines):
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
            parsed = _parse(tag) if tag else None
            if parsed and not self.glued and not parsed[0] and self.block is None and _pascal(tag):
                before = data[pos - 1] if pos else self.prev
                if before.isalnum() or before == "_":
                    parsed = None
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


def _pascal(tag: str) -> bool:
    """Whether the tag's name is capitalised as a type's is: `<Thought>`, not `<THINK>`."""
    name = tag[1:].split(">", 1)[0].split(None, 1)[0] if len(tag) > 2 else ""
    return name[:1].isupper() and not name.isupper()


class _Markers(_Lines):
    """Steps 2 and 5: a line starting with a marker, and the lines after it up to the
    next blank line, are dropped (a tool call's arguments, a result's output)."""

    def __init__(self, markers: tuple[str, ...]) -> None:
        super().__init__()
        self.markers, self.longest = markers, max(map(len, markers))
        self.buf, self.skipping, self.line_start = "", False, True

    def feed(self, s: str, final: bool = False) -> str:
        if not self.buf and not self.skipping and not self.line_start and "\n" not in s:
            self._track(s)  # the hot path: the middle of an ordinary line
            return s
        data, self.buf = self.buf + s, ""
        out: list[str] = []
        pos, n = 0, len(data)
        while pos < n:
            if self.skipping:
                if self.line_start:
                    m = _NOT_BLANK.search(data, pos)
                    if m is None:  # blank so far: maybe the line that ends the block
                        self.buf = "" if final else data[pos:]
                        break
                    if data[m.start()] == "\n":
                        self.skipping = False  # a blank line ends the block and is kept
                        continue
                nl = data.find("\n", pos)
                self.line_start, pos = nl >= 0, (n if nl < 0 else nl + 1)
                continue
            if self.line_start and not self.fence and data[pos] == "[":
                low = data[pos : pos + self.longest].lower()
                if any(low.startswith(m) for m in self.markers):
                    self.skipping, self.line_start = True, False
                    continue
                if not final and len(low) < self.longest and any(m.startswith(low) for m in self.markers):
                    self.buf = data[pos:]
                    break
            nl = data.find("\n", pos)
            end = n if nl < 0 else nl + 1
            out.append(data[pos:end])
            self._track(data[pos:end])
            self.line_start, pos = nl >= 0, end
        return "".join(out)


class _Dedup(_Lines):
    """Step 6: a paragraph (run of non-blank lines) equal to the previous one is dropped
    with the blank lines before it. It is held only while it still matches."""

    def __init__(self) -> None:
        super().__init__()
        self.prev: str | None = None  # the previous paragraph, if a repeat of it may go
        self.cur, self.in_para, self.eligible, self.line_start = "", False, False, True
        self.holding, self.held, self.sep, self.pending = False, "", "", ""

    def feed(self, s: str, final: bool = False) -> str:
        if not self.pending and not self.holding and not self.line_start and "\n" not in s:
            self._grow(s)  # the hot path: the middle of a line of a new paragraph
            return s
        data, self.pending = self.pending + s, ""
        out: list[str] = []
        pos, n = 0, len(data)
        while pos < n:
            nl = data.find("\n", pos)
            end = n if nl < 0 else nl + 1
            piece, pos = data[pos:end], end
            if self.line_start and not piece.strip():
                if nl < 0 and not final:
                    self.pending = piece  # blank line or indentation: not known yet
                    break
                self._end(out)
                if self.prev is not None and not self.fence:
                    self.sep += piece
                else:
                    out.append(piece)
            else:
                self._text(piece, out)
                self.line_start = nl >= 0
        if final:
            self._end(out)
            out.append(self.sep)
            self.sep = ""
        return "".join(out)

    def _grow(self, piece: str) -> None:
        if len(self.cur) <= PARAGRAPH_CAP + 1:  # beyond that it can be neither a repeat nor repeated
            self.cur += piece
        if self._track(piece):
            self.eligible = False  # a paragraph with a fence line is code: never dropped

    def _text(self, piece: str, out: list[str]) -> None:
        if not self.in_para:
            self.in_para, self.cur, self.eligible = True, "", not self.fence
            self.holding = self.prev is not None and not self.fence
            if self.holding:
                self.held = self.sep
            else:
                out.append(self.sep)
            self.sep = ""
        self._grow(piece)
        if not self.holding:
            out.append(piece)
            return
        self.held += piece
        prev, cur = self.prev or "", self.cur
        if not (prev.startswith(cur) or cur == prev + "\n"):
            out.append(self.held)
            self.held, self.holding = "", False

    def _end(self, out: list[str]) -> None:
        if not self.in_para:
            return
        self.in_para = False
        key = self.cur.removesuffix("\n")
        if self.holding:
            held, self.held, self.holding = self.held, "", False
            if key == self.prev:
                return  # the model stuttered: the repeat goes, with its separator
            out.append(held)
        self.prev = key if self.eligible and len(key) <= PARAGRAPH_CAP else None


class _Leading:
    """Step 7: whitespace-only lines at the start go; the first line keeps its indent."""

    def __init__(self) -> None:
        self.started, self.buf = False, ""

    def feed(self, s: str, final: bool = False) -> str:
        if self.started:
            return s
        data = self.buf + s
        body = data.lstrip()
        if not body:
            self.buf = "" if final else data
            return ""
        self.started, self.buf = True, ""
        return data[data.rfind("\n", 0, len(data) - len(body)) + 1 :]


class StreamSanitizer:
    """The pipeline for one streamed message: `feed` each text delta, then `finish`.

    Both return (text to emit now, thought to emit now); see the module docstring for
    what may be held back. Not reusable after `finish`.
    """

    def __init__(self) -> None:
        self._garbled = _Tags(
            _garbled,
            ("<tool_", "</tool_", "<function", "</function", "<parameter", "</parameter",
             "<minimax:", "</minimax:", "<|tool", "<｜tool"),
            ("</tool_", "</function", "</parameter", "</minimax:", "<|tool", "<｜tool"),
        )
        self._downgraded = _Markers(("[tool call:", "[tool result", "[historical context:"))
        think_ends = ("</think", "</thought", "</antthinking")
        self._thinking = _Tags(
            _thinking, ("<think", "<thought", "<antthinking", *think_ends), think_ends, thought=True, glued=False
        )
        self._final = _Tags(_final, ("<final", "</final", "<answer", "</answer"), (), glued=False)
        self._echoed = _Markers(("[system message]",))
        self._dedup = _Dedup()
        self._leading = _Leading()

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
