"""Message framing for JSON-RPC over a byte stream: LSP headers or one JSON per line.

Owns: turning a byte stream into message bodies (one over the limit skipped, never kept)
and message bodies into frames, and telling the two framings apart from a client's first bytes. Must not: parse JSON, know
about methods, or do I/O — the daemon's transport and the Python client both feed it.
Stdlib only: the daemon imports it on its start-up path.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

Framing = Literal["lsp", "ndjson"]

_HEADER_END = b"\r\n\r\n"
_MAX_HEADER = 8192
# the header as clients write it (any other spelling takes the general path)
_PLAIN_HEADER = re.compile(rb"Content-Length: ([0-9]{1,15})\r\n\r\n")


# The most one message may hold unless the daemon is told otherwise (SPEC §1.2 says why);
# the daemon passes its own from the user's `max_message_mib`.
DEFAULT_MAX_MESSAGE = 64 << 20
# A Content-Length above this (64 GiB) is no length but a corrupt header: skipping that many
# bytes would eat the rest of the connection, so it is answered as a malformed header.
_ABSURD_LENGTH = 1 << 36


class FramingError(Exception):
    """The stream is not framed the way the connection expects; the body is unusable.

    ``bodies`` are the whole messages decoded before the bad frame in the same feed."""

    def __init__(self, why: str, bodies: list[bytes] | None = None) -> None:
        super().__init__(why)
        self.bodies = bodies or []


class FrameTooLarge(FramingError):
    """One message over the limit: its bytes are skipped, not kept, and reading goes on."""

    def __init__(self, size: int, limit: int, bodies: list[bytes] | None = None) -> None:
        super().__init__(f"a message of {size} bytes is over the limit of {limit} bytes", bodies)
        self.size = size
        self.limit = limit


def detect_framing(first_bytes: bytes) -> Framing | None:
    """Guess the framing from the first bytes a client sent; None until it can tell.

    `Content-Length:` (any case) means LSP framing; `{` or `[` means one JSON per line.
    Leading whitespace is skipped, so a client that starts with a blank line still works.
    """
    data = first_bytes.lstrip()
    if not data:
        return None
    if data[:1] in (b"{", b"["):
        return "ndjson"
    prefix = b"content-length:"
    head = data[: len(prefix)].lower()
    if prefix.startswith(head):
        return "lsp" if len(head) == len(prefix) else None
    # Anything else is a header we do not know (Content-Type first): LSP framing.
    return "lsp"


class LspFrameDecoder:
    """Incremental decoder for `Content-Length` framed messages.

    `feed()` returns every complete body; a partial frame waits for more bytes. A frame
    with a missing or bad length raises FramingError *after* skipping its header, and one
    longer than ``limit`` raises FrameTooLarge as soon as its header is read, its body then
    dropped as it arrives (never buffered), so the caller can answer and keep reading.
    """

    def __init__(self, limit: int | None = DEFAULT_MAX_MESSAGE) -> None:
        self._buf = bytearray()
        self._limit = limit
        self._skip = 0  # bytes of an over-limit body still to drop

    def feed(self, data: bytes) -> list[bytes]:
        if self._skip:
            dropped = min(self._skip, len(data))
            self._skip -= dropped
            data = data[dropped:]
        self._buf += data
        buf = self._buf
        bodies: list[bytes] = []
        pos = 0  # consumed so far; the buffer is compacted once per feed, not per frame
        try:
            while True:
                plain = _PLAIN_HEADER.match(buf, pos)  # one C call for what every client sends
                if plain is not None and int(plain[1]) <= _ABSURD_LENGTH:
                    start, length = plain.end(), int(plain[1])
                else:
                    end = buf.find(_HEADER_END, pos)
                    if end < 0:
                        if len(buf) - pos > _MAX_HEADER:
                            pos = len(buf)
                            raise FramingError("header too long or not terminated by CRLF CRLF", bodies)
                        return bodies
                    found = _content_length(bytes(buf[pos:end]))
                    start = end + len(_HEADER_END)
                    if found is None:
                        pos = start
                        raise FramingError("frame header has no valid Content-Length", bodies)
                    length = found
                if self._limit is not None and length > self._limit:
                    pos = min(len(buf), start + length)
                    self._skip = start + length - pos
                    raise FrameTooLarge(length, self._limit, bodies)
                if len(buf) - start < length:
                    return bodies
                bodies.append(bytes(buf[start : start + length]))
                pos = start + length
        finally:
            if pos:
                del buf[:pos]

    @property
    def pending(self) -> int:
        return len(self._buf)


def _content_length(header: bytes) -> int | None:
    for line in header.split(b"\r\n"):
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"content-length":
            digits = value.strip()
            # int() would also take "1_0" and "+5"; a length is plain digits.
            # (and more than 15 digits is no length: int() refuses 4,301 of them)
            if digits.isdigit() and digits.isascii() and len(digits) <= 15 and int(digits) <= _ABSURD_LENGTH:
                return int(digits)
            return None
    return None


class NdjsonDecoder:
    """Incremental decoder for newline-delimited JSON: one message per line, blank lines skipped.

    A line that grows past ``limit`` is dropped as it arrives, up to its newline, where
    FrameTooLarge (naming its whole size) is raised; the lines after it decode as usual."""

    def __init__(self, limit: int | None = DEFAULT_MAX_MESSAGE) -> None:
        self._buf = bytearray()
        self._limit = limit
        self._scanned = 0  # bytes of the buffer known to hold no newline
        self._skipped = -1  # bytes dropped of an over-limit line (-1: not in one)

    def feed(self, data: bytes) -> list[bytes]:
        if self._skipped >= 0:
            nl = data.find(b"\n")
            if nl < 0:
                self._skipped += len(data)
                return []
            size, self._skipped = self._skipped + nl, -1
            self._buf += data[nl + 1 :]  # decoded by the caller's next feed
            raise FrameTooLarge(size, self._limit or 0)
        self._buf += data
        buf = self._buf
        bodies: list[bytes] = []
        pos = 0
        try:
            while (nl := buf.find(b"\n", max(pos, self._scanned))) >= 0:
                start, pos = pos, nl + 1
                if self._limit is not None and nl - start > self._limit:
                    raise FrameTooLarge(nl - start, self._limit, bodies)
                line = bytes(buf[start:nl]).strip()
                if line:
                    bodies.append(line)
        finally:
            if pos:
                del buf[:pos]  # once per feed: a big read of many lines stays linear
            self._scanned = 0
        self._scanned = len(buf)  # no newline in it: a long line is not searched again from its start
        if self._limit is not None and len(buf) > self._limit:
            self._skipped = len(buf)
            buf.clear()
            self._scanned = 0
        return bodies

    @property
    def pending(self) -> int:
        return len(self._buf)


def encode_lsp(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def encode_ndjson(body: bytes) -> bytes:
    # json.dumps never emits a raw newline (they are escaped inside strings).
    return body + b"\n"


def decoder_for(framing: Framing, limit: int | None = DEFAULT_MAX_MESSAGE) -> LspFrameDecoder | NdjsonDecoder:
    return LspFrameDecoder(limit) if framing == "lsp" else NdjsonDecoder(limit)


def encoder_for(framing: Framing) -> Callable[[bytes], bytes]:
    return encode_lsp if framing == "lsp" else encode_ndjson
