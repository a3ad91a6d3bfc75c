"""Server-sent events on bytes: what one socket read delivered in, the events it completed out.

Owns: the event-stream framing as the WHATWG specification interprets it (LF, CRLF or CR line ends across
reads, comments, joined `data`, `event`, a leading BOM, no dispatch of a cut-off event).
Must not: decode JSON, know any provider, or cost more per event than a split and a prefix test (decision 0005).
"""

from __future__ import annotations

from itertools import repeat

SSEEvent = tuple[str, bytes]  # (event name, "" when the frame names none; data)

_BOM = b"\xef\xbb\xbf"


class SSEDecoder:
    """Feed it each read's bytes; it returns the events those bytes completed, in order."""

    __slots__ = ("_tail", "_cr", "_started")

    def __init__(self) -> None:
        self._tail = b""  # the frame in progress (line ends already normalised to LF)
        self._cr = False  # the previous read ended in CR: an LF starting this one is the same line end
        self._started = False  # past a possible byte-order mark

    @property
    def pending(self) -> bool:
        """Whether an event has begun that no blank line has completed yet."""
        return bool(self._tail.strip(b"\n"))

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        if self._cr or b"\r" in chunk:
            chunk = self._normalised(chunk)
        data = self._tail + chunk if self._tail else chunk
        if not self._started:
            if len(data) < len(_BOM) and _BOM.startswith(data):
                self._tail = data  # maybe the start of a byte-order mark: wait for more
                return []
            self._started = True
            if data.startswith(_BOM):
                data = data[len(_BOM) :]
        body, blank, self._tail = data.rpartition(b"\n\n")
        if not blank:
            return []
        return _uniform(body) or _events(body.split(b"\n\n"))

    def _normalised(self, chunk: bytes) -> bytes:
        if self._cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]  # the LF of a CRLF whose CR ended the previous read
        self._cr = chunk.endswith(b"\r")
        return chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def _uniform(body: bytes) -> list[SSEEvent] | None:
    """The events of complete frames that are all `data: x` or all `event: n` + `data: x`
    lines (what the APIs send), checked and cut by whole-list operations; None otherwise."""
    lines = body.split(b"\n")
    if lines[0].startswith(b"data: "):
        datas, blanks, names = lines[0::2], lines[1::2], None
    elif lines[0].startswith(b"event: ") and len(lines) % 3 == 2:
        names, datas, blanks = lines[0::3], lines[1::3], lines[2::3]
        if not all(map(bytes.startswith, names, repeat(b"event: "))):
            return None
    else:
        return None
    if any(blanks) or not all(map(bytes.startswith, datas, repeat(b"data: "))):
        return None
    if names is None:
        return [("", data[6:]) for data in datas]
    return list(
        zip([_NAMES.get(name) or _line_name(name) for name in names], [data[6:] for data in datas], strict=True)
    )


def _events(frames: list[bytes]) -> list[SSEEvent]:
    out: list[SSEEvent] = []
    append = out.append
    for frame in frames:
        # the hot paths: `data: ...` alone (OpenAI) and `event: x` + `data: ...` (Anthropic)
        if frame.startswith(b"data: "):
            if b"\n" not in frame:
                append(("", frame[6:]))
                continue
        elif frame.startswith(b"event: "):
            nl = frame.find(b"\n")
            if nl > 0 and frame.startswith(b"data: ", nl + 1) and frame.find(b"\n", nl + 1) < 0:
                append((_name(frame[7:nl]), frame[nl + 7 :]))
                continue
        event = _frame(frame)
        if event is not None:
            append(event)
    return out


def _frame(frame: bytes) -> SSEEvent | None:
    """Any other frame, line by line (comments, multi-line data, fields without a space)."""
    name = ""
    data: list[bytes] = []
    for line in frame.split(b"\n"):
        if not line or line.startswith(b":"):
            continue  # a blank line left before the frame, or a comment
        field, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            data.append(value)
        elif field == b"event":
            name = _name(value)
    return (name, b"\n".join(data)) if data else None


def _name(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


_NAMES: dict[bytes, str] = {}  # `event: x` line -> "x", for the few names a provider uses


def _line_name(line: bytes) -> str:
    name = line[7:].decode("utf-8", "replace")
    if len(_NAMES) < 64:
        _NAMES[line] = name
    return name
