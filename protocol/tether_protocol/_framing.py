"""Message framing for JSON-RPC over a byte stream: LSP headers or one JSON per line.

Owns: turning a byte stream into message bodies and message bodies into frames, and
telling the two framings apart from a client's first bytes. Must not: parse JSON, know
about methods, or do I/O — the daemon's transport and the Python client both feed it.
Stdlib only: the daemon imports it on its start-up path.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Callable

Framing = Literal["lsp", "ndjson"]

_HEADER_END = b"\r\n\r\n"
_MAX_HEADER = 8192
# the header as clients write it (any other spelling takes the general path)
_PLAIN_HEADER = re.compile(rb"Content-Length: ([0-9]{1,15})\r\n\r\n")


class FramingError(Exception):
    """The stream is not framed the way the connection expects; the body is unusable."""


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
    with a missing or bad length raises FramingError *after* skipping its header, so the
    caller can answer with a parse error and keep reading.
    """

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        self._buf += data
        buf = self._buf
        bodies: list[bytes] = []
        pos = 0  # consumed so far; the buffer is compacted once per feed, not per frame
        try:
            while True:
                plain = _PLAIN_HEADER.match(buf, pos)  # one C call for what every client sends
                if plain is not None:
                    start, length = plain.end(), int(plain[1])
                else:
                    end = buf.find(_HEADER_END, pos)
                    if end < 0:
                        if len(buf) - pos > _MAX_HEADER:
                            pos = len(buf)
                            raise FramingError("header too long or not terminated by CRLF CRLF")
                        return bodies
                    found = _content_length(bytes(buf[pos:end]))
                    start = end + len(_HEADER_END)
                    if found is None:
                        pos = start
                        raise FramingError("frame header has no valid Content-Length")
                    length = found
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
            return int(digits) if digits.isdigit() and digits.isascii() and len(digits) <= 15 else None
    return None


class NdjsonDecoder:
    """Incremental decoder for newline-delimited JSON: one message per line, blank lines skipped."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        self._buf += data
        buf = self._buf
        bodies: list[bytes] = []
        pos = 0
        while True:
            nl = buf.find(b"\n", pos)
            if nl < 0:
                break
            line = bytes(buf[pos:nl]).strip()
            pos = nl + 1
            if line:
                bodies.append(line)
        if pos:
            del buf[:pos]  # once per feed: a big read of many lines stays linear
        return bodies

    @property
    def pending(self) -> int:
        return len(self._buf)


def encode_lsp(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def encode_ndjson(body: bytes) -> bytes:
    # json.dumps never emits a raw newline (they are escaped inside strings).
    return body + b"\n"


def decoder_for(framing: Framing) -> LspFrameDecoder | NdjsonDecoder:
    return LspFrameDecoder() if framing == "lsp" else NdjsonDecoder()


def encoder_for(framing: Framing) -> Callable[[bytes], bytes]:
    return encode_lsp if framing == "lsp" else encode_ndjson
