"""The first message, read before the event loop exists.

Owns: reading the protocol fd until one whole message (or end of input), framing detected
from its bytes, so `tether serve` can answer `initialize` before importing the server.
A first message over 1 MiB is left to the server. Must not: answer anything itself (`server/early.py` does) or import beyond the standard
library, msgspec and `tether_protocol`'s framing and JSON (what the answer needs anyway).
"""

from __future__ import annotations

import os
from typing import Any

from msgspec import Struct

from tether_protocol import Framing, FramingError, decoder_for, detect_framing, encoder_for, loads


class FirstRead(Struct, frozen=True):  # a Struct: made before the answer (0.05 vs 1 ms)
    framing: Framing | None
    # The first message, parsed; None if there is none or it is not JSON.
    message: Any
    # Every byte read (what the server reads if the first message is left to it) ...
    raw: bytes
    # ... and the bytes after the first message's frame (if it is answered early).
    after_first: bytes
    eof: bool


# More than this without a whole first message and the server reads it instead, under
# the user's limit on one message (the fast start's `initialize` is a few KiB).
_FIRST_MESSAGE_CAP = 1 << 20


def read_first_message(read_fd: int, framing: Framing | None) -> FirstRead:
    buf = b""
    while True:
        chunk = os.read(read_fd, 1 << 16)
        if not chunk:
            return FirstRead(framing, None, buf, b"", eof=True)
        buf += chunk
        if len(buf) > _FIRST_MESSAGE_CAP:
            return FirstRead(framing or detect_framing(buf), None, buf, b"", eof=False)
        framing = framing or detect_framing(buf)
        if framing is None:
            continue
        decoder = decoder_for(framing)
        try:
            bodies = decoder.feed(buf)
        except FramingError:  # the server answers it with a parse error
            return FirstRead(framing, None, buf, b"", eof=False)
        if bodies:
            rest = bytes(decoder._buf)
            after = b"".join(encoder_for(framing)(b) for b in bodies[1:]) + rest
            return FirstRead(framing, _parse(bodies[0]), buf, after, eof=False)


def _parse(body: bytes) -> Any:
    try:
        return loads(body)
    except (ValueError, RecursionError):
        return None


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
