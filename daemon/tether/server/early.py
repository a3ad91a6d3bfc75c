"""`initialize` answered before the server stack is imported.

Owns: deciding whether the client's first message is a well-formed `initialize` request
and, if so, answering it with `handshake` (the same code the full server's `initialize`
handler runs, so both answer alike byte for byte). Must not: answer anything else; every
other first message goes to the full server untouched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tether_protocol import JsonObject, TetherError, dumps, encoder_for

from ..config import Settings
from ..transport.first_message import FirstRead, write_all
from .handshake import ClientProfile, handshake


def answer_initialize(
    write_fd: int, first: FirstRead, settings: Settings, root: Path
) -> tuple[tuple[ClientProfile, Settings] | None, bytes]:
    """(the accepted client, if `initialize` was answered here; the bytes left for the server)."""
    message = first.message
    if first.framing is None or not _is_initialize(message):
        return None, first.raw
    accepted = None
    try:
        result, profile, merged = handshake(message.get("params"), settings, root)
        reply: JsonObject = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        accepted = (profile, merged)
    except TetherError as exc:
        reply = {"jsonrpc": "2.0", "id": message["id"], "error": exc.to_error()}
    write_all(write_fd, encoder_for(first.framing)(dumps(reply)))
    return accepted, first.after_first


def _is_initialize(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and message.get("method") == "initialize"
        and message.get("jsonrpc") == "2.0"
        and isinstance(message.get("id"), (int, str))
        and not isinstance(message.get("id"), bool)
        and isinstance(message.get("params", {}), (dict, type(None)))
    )
