"""Bytes in, messages out, for either framing.

Owns: `MessageReader` — framing detected from a client's first bytes unless fixed, frames
decoded (`_framing.py`), bodies parsed as JSON, and what cannot be read handed back as a
`ParseError` value so the peer answers it and keeps reading. Must not: classify messages
(that is `peer.py`) or do I/O.
"""

from __future__ import annotations

from typing import Any

from ._errors import ParseError
from ._framing import Framing, FramingError, decoder_for, detect_framing
from ._json import loads


class MessageReader:
    """Bytes in, messages out: framing detected from the first bytes unless fixed. A body
    that is not JSON, or a frame that cannot be read, comes out as a `ParseError` value in
    place of its message, so the caller can answer it and keep reading."""

    def __init__(self, framing: Framing | None = None) -> None:
        self.framing = framing
        self._decoder = decoder_for(framing) if framing else None
        self._sniffed = b""

    def set_framing(self, framing: Framing) -> None:
        self.framing = framing
        self._decoder = decoder_for(framing)

    @property
    def pending(self) -> bytes:
        """Bytes read but not yet a whole message."""
        if self._decoder is None:
            return self._sniffed
        return bytes(self._decoder._buf)

    def feed(self, data: bytes) -> list[Any]:
        if self._decoder is None:
            self._sniffed += data
            framing = detect_framing(self._sniffed)
            if framing is None:
                return []
            self.set_framing(framing)
            data, self._sniffed = self._sniffed, b""
        assert self._decoder is not None
        out: list[Any] = []
        while True:
            try:
                bodies = self._decoder.feed(data)
            except FramingError as exc:
                out.append(ParseError(f"parse error: {exc}"))
                data = b""
                continue
            break
        for body in bodies:
            try:
                out.append(loads(body))
            except (ValueError, RecursionError) as exc:
                out.append(ParseError(_not_json(body, exc)))
        return out


def _not_json(body: bytes | bytearray, exc: Exception) -> str:
    """Why ``body`` could not be read: bytes that are not UTF-8 are named as such (the JSON
    parser's own "Expecting value" would hide that), else the parser's first line."""
    try:
        bytes(body).decode("utf-8")
    except UnicodeDecodeError as bad:
        return (
            f"parse error: the message is not UTF-8 (byte 0x{body[bad.start]:02x} at offset {bad.start}); "
            f"send JSON-RPC messages as UTF-8-encoded JSON"
        )
    detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"parse error: the message is not valid JSON ({detail})"
