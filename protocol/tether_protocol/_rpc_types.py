"""The vocabulary of the JSON-RPC peer (`peer.py`): routes, results, errors, options.

Owns: the small types a peer's user names: `Route`, `Later` (a params class imported on first
use), `RawResult`, `RequestFailed`, the `Outbox` a peer writes to, `PeerOptions`, and the
request-id context variable. Must not: do anything (behaviour lives in `peer.py` and
`_reader.py`) or import past the stdlib, `_errors` and `_json`.
"""

from __future__ import annotations

import contextvars
import importlib
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ._errors import TetherError, error_object
from ._json import JsonObject

Handler = Callable[[Any], Awaitable[Any]]
RequestCallback = Callable[[str, Any], Awaitable[Any]]
NotificationCallback = Callable[[str, Any], None]
CancelStyle = Literal["lsp", "acp"]

current_request_id: contextvars.ContextVar[int | str | None] = contextvars.ContextVar(
    "tether_request_id", default=None
)


@dataclass(frozen=True, slots=True)
class Later:
    """The class `tether_protocol.<module>.<name>`, imported when a message first needs
    it: a daemon's start path does not pay for message modules it has not used yet."""

    module: str
    name: str

    def load(self) -> type:
        cls = getattr(importlib.import_module(f"tether_protocol.{self.module}"), self.name)
        assert isinstance(cls, type), f"{self}: not a class"
        return cls


@dataclass(slots=True)
class Route:
    """One method: its handler, the class its params are structured into (None: the raw
    JSON object; `Later`: imported on the first call), and whether it is a notification."""

    method: str
    handler: Handler
    params_cls: type | Later | None = None
    notification: bool = False
    # Requests that answer their own cancellation (session/prompt answers
    # `{"stopReason": "cancelled"}` rather than a -32800 error).
    on_cancel: Callable[[Any], None] | None = None


@dataclass(frozen=True, slots=True)
class RawResult:
    """A handler's result already encoded as compact JSON text: sent as the `result`
    without decoding and encoding it again."""

    json: str


class RequestFailed(Exception):
    """The other side answered one of our requests with an error. Raised by a request
    handler, it is sent back as that error (code, message and data as given)."""

    def __init__(self, method: str, error: Mapping[str, Any]) -> None:
        self.method = method
        code = error.get("code", 0)
        self.code: int = code if isinstance(code, int) and not isinstance(code, bool) else 0
        self.message: str = str(error.get("message", ""))
        self.data: Any = error.get("data")
        super().__init__(f"{method}: {self.message} (code {self.code})")

    @property
    def error_message(self) -> str:
        return self.message

    def to_error(self) -> JsonObject:
        return error_object(self.code, self.message, self.data)


class Outbox(Protocol):
    """Where the peer's messages go: frames them and writes them (batched or not)."""

    def send(self, message: Any) -> None: ...

    def send_body(self, body: bytes) -> None: ...


@dataclass(slots=True)
class PeerOptions:
    """How one end behaves where the two ends differ."""

    # Ids of our requests: "tether-1", ... (the daemon) or 1, 2, ... (None: clients).
    id_prefix: str | None = None
    # How we tell the other side that we gave up on a request; None: we do not.
    cancel_style: CancelStyle | None = "lsp"
    # Responses to no request of ours are kept in `received` (a client's tests read
    # parse errors there) rather than only counted.
    keep_orphans: bool = False
    # Methods whose handlers fail on purpose (tests of what a client sees of a bug).
    failpoints: Collection[str] = field(default_factory=frozenset)
    # Where a bug's details go, as the error message names it.
    log_name: str = "the log"
    # A handler's exception that is not a bug (the daemon's history on a full disk): the
    # error it is answered with instead of -32603 (None: it is a bug). Called only on failure,
    # so no wrapper sits between the peer and each handler.
    known_failure: Callable[[str, Exception], TetherError | None] | None = None
