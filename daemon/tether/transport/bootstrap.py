"""Fast start: answer `initialize` while the rest of the daemon is still importing.

Importing pygls (and the lsprotocol types it pulls in) costs ~0.5-0.7 s of CPU on the
machines we measure on, most of an editor's wait for the first answer. So `tether serve`
takes its private fds, starts that import on a thread, and meanwhile reads the first
message with the standard library alone. If it is `initialize`, it is answered at once by
`server.handshake` (the same code the full server uses, so both paths answer alike);
every other byte is handed to the full server when the import is done. Nothing here may
import beyond the standard library and `tether_protocol`'s stdlib modules.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether_protocol._errors import TetherError
from tether_protocol._framing import (
    Framing,
    FramingError,
    decoder_for,
    detect_framing,
    encoder_for,
)

from ..config import Settings
from ..server.handshake import ClientProfile, handshake
from .stdio import ProtocolFds


@dataclass(slots=True)
class EarlyStart:
    framing: Framing | None = None
    accepted: tuple[ClientProfile, Settings] | None = None
    leftover: bytes = b""
    eof: bool = False
    import_error: BaseException | None = None
    timings: dict[str, float] = field(default_factory=dict)


def import_server_stack(result: EarlyStart) -> threading.Thread:
    def work() -> None:
        try:
            import tether.server.app  # noqa: F401  (the heavy part: pygls, attrs, aiosqlite)
        except BaseException as exc:  # re-raised on the main thread by the real import
            result.import_error = exc

    thread = threading.Thread(target=work, name="tether-import", daemon=True)
    thread.start()
    return thread


def answer_initialize_early(
    fds: ProtocolFds, settings: Settings, root: Path, framing: Framing | None, early: EarlyStart
) -> None:
    """Read up to the first complete message; answer it here if it is `initialize`."""
    buf = b""
    while True:
        chunk = os.read(fds.read_fd, 1 << 16)
        if not chunk:
            early.eof, early.leftover = True, buf
            return
        buf += chunk
        if framing is None:
            framing = detect_framing(buf)
            if framing is None:
                continue
        decoder = decoder_for(framing)
        try:
            bodies = decoder.feed(buf)
        except FramingError:
            break  # the full server reports it
        if bodies:
            break
    early.framing = framing
    early.leftover = buf
    if framing is None or not bodies:
        return
    message = _parse(bodies[0])
    if not (
        isinstance(message, dict)
        and message.get("method") == "initialize"
        and message.get("jsonrpc") == "2.0"
        and isinstance(message.get("id"), (int, str))
        and not isinstance(message.get("id"), bool)
        and isinstance(message.get("params", {}), (dict, type(None)))
    ):
        return  # not the common case: let the full server handle everything
    encode = encoder_for(framing)
    try:
        result, profile, merged = handshake(message.get("params"), settings, root)
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        early.accepted = (profile, merged)
    except TetherError as exc:
        reply = {"jsonrpc": "2.0", "id": message["id"], "error": exc.to_error()}
    body = json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    _write_all(fds.write_fd, encode(body))
    early.leftover = b"".join(encode(b) for b in bodies[1:]) + _rest(decoder)


def _rest(decoder: Any) -> bytes:
    return bytes(decoder._buf)


def _parse(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
