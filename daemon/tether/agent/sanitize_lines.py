"""The line-oriented stages of the output pipeline (see ``sanitize``, which runs them).

Owns: ``Lines`` (following fenced code blocks and inline code spans in streamed text)
and the stages on whole lines: ``Markers`` (steps 2, 5), ``Dedup`` (6), ``Leading`` (7).
Must not: hold back more than decision 0011 says, or know about tags (``sanitize._Tags``).
"""

from __future__ import annotations

import re

PARAGRAPH_CAP = 2_000  # a longer paragraph is never held to check for a repeat
_NOT_BLANK = re.compile(r"[^ \t\r]")

_FENCE = re.compile(r"(`{3,}|~{3,})(.*)", re.DOTALL)
_FENCE_HEAD = 80  # how much of a line's start is kept to tell a fence line
_TICKS = re.compile("`+")


class Lines:
    """Follows code as Markdown marks it, in the text that went past: fenced blocks
    (a line starting with 3+ backticks or tildes opens one, only a line of at least as
    many of the same closes it, when the line ends) and inline code spans (a run of
    backticks opens one, the next run of the same length closes it; a span ends with its
    line at the latest, so a lone backtick cannot hold everything after it as code)."""

    spans = False  # whether inline spans matter to the stage (tags do; lines do not)

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Back to the start of a message (a stage is kept for the next one)."""
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
            if self.spans and ((self.fence is None and "`" in part) or self.run):
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


class Markers(Lines):
    """Steps 2 and 5: a line starting with a marker, and the lines after it up to the
    next blank line, are dropped (a tool call's arguments, a result's output)."""

    def __init__(self, markers: tuple[str, ...]) -> None:
        super().__init__()
        self.markers, self.longest = markers, max(map(len, markers))

    def reset(self) -> None:
        super().reset()
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


class Dedup(Lines):
    """Step 6: a paragraph (run of non-blank lines) equal to the previous one is dropped
    with the blank lines before it. It is held only while it still matches."""

    def reset(self) -> None:
        super().reset()
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


class Leading:
    """Step 7: whitespace-only lines at the start go; the first line keeps its indent."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
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
