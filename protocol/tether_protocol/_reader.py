"""Bytes in, messages out, for either framing.

Owns: `MessageReader` — framing detected from the first bytes unless fixed, frames decoded
(`_framing.py`) under a limit on one message, bodies parsed as JSON, and what cannot be read
handed back as a `ParseError` (over the limit: `InvalidRequest`) for the peer to answer.
Must not: classify messages (that is `peer.py`) or do I/O.
"""

from __future__ import annotations

from typing import Any

from ._errors import InvalidRequest, ParseError
from ._framing import DEFAULT_MAX_MESSAGE, FrameTooLarge, Framing, FramingError, decoder_for, detect_framing
from ._json import loads


class MessageReader:
    """Bytes in, messages out: framing detected from the first bytes unless fixed. A body
    that is not JSON, or a frame that cannot be read, comes out as a `ParseError` value in
    place of its message, so the caller can answer it and keep reading. ``max_message``
    bytes is the most one message may hold (None: no limit, for a client of its own daemon)."""

    def __init__(self, framing: Framing | None = None, max_message: int | None = DEFAULT_MAX_MESSAGE) -> None:
        self.framing = framing
        self._max_message = max_message
        self._decoder = decoder_for(framing, max_message) if framing else None
        self._sniffed = b""

    def set_framing(self, framing: Framing) -> None:
        self.framing = framing
        self._decoder = decoder_for(framing, self._max_message)

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
                out += [_parsed(body) for body in exc.bodies]
                out.append(_too_large(exc) if isinstance(exc, FrameTooLarge) else ParseError(f"parse error: {exc}"))
                data = b""
                continue
            break
        out += [_parsed(body) for body in bodies]
        return out


def _parsed(body: bytes) -> Any:
    try:
        return loads(body)
    except (ValueError, RecursionError) as exc:
        return ParseError(_not_json(body, exc))


def _too_large(exc: FrameTooLarge) -> InvalidRequest:
    return InvalidRequest(
        f"invalid request: the message is {exc.size:,} bytes, over the limit of {exc.limit:,} bytes "
        f"({exc.limit / (1 << 20):.1f} MiB) on one message; it was skipped. Send a large file by its path "
        f"(a resource_link; _tether/session/restore takes a path), or raise max_message_mib in your "
        f"user config (the limit is 6 x max_message_mib + 1 MiB, at least 64 MiB)"
    )


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
