"""The error codes of the Tether protocol and the exception for each (SPEC §6).

Owns: every code a client can see in a JSON-RPC error (the tree below), and how an exception
becomes an error object. Must not: format tracebacks into errors (they go to the daemon's log),
or import past the stdlib and `_json`: the start path answers `initialize` errors with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._json import JsonObject

# The codes (SPEC §6):
#
# TetherError                      (base; .code, .message, .data, .to_error())
# ├── ParseError                   -32700  the bytes are not JSON
# ├── InvalidRequest               -32600  JSON, but not a JSON-RPC 2.0 message
# ├── MethodNotFound               -32601  no such method
# ├── InvalidParams                -32602  params do not fit; names the field
# ├── InternalError                -32603  a bug; the message carries a log reference only
# ├── RequestCancelled             -32800  the client cancelled the request
# ├── SessionNotFound              -32002  ACP's "resource not found": unknown session id
# ├── SessionBusy                  -32010  a turn is already running in that session
# ├── NoProviderConfigured         -32011  no model provider; says how to set one
# ├── ProviderFailed               -32012  the model provider failed mid-turn
# ├── ConfigInvalid                -32013  a configuration value is wrong; names the key
# ├── WorkspaceInvalid             -32014  cwd/root is not an absolute existing directory
# └── StorageFailed                -32015  the history cannot be read or written (disk, file, folder)


class TetherError(Exception):
    code: int = -32603
    default_message = "internal error"

    def __init__(self, message: str | None = None, data: Any = None) -> None:
        self.message = message or self.default_message
        self.data = data
        super().__init__(self.message)

    def to_error(self) -> JsonObject:
        return error_object(self.code, self.message, self.data)


def error_object(code: int, message: str, data: Any = None) -> JsonObject:
    """A JSON-RPC error object (`data` only when there is some)."""
    error: JsonObject = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return error


class ParseError(TetherError):
    code = -32700
    default_message = "parse error: the message is not valid JSON"


class InvalidRequest(TetherError):
    code = -32600
    default_message = "invalid request: not a JSON-RPC 2.0 message"


class MethodNotFound(TetherError):
    code = -32601
    default_message = "method not found"


class InvalidParams(TetherError):
    code = -32602
    default_message = "invalid params"


class InternalError(TetherError):
    code = -32603


class RequestCancelled(TetherError):
    code = -32800
    default_message = "request cancelled"


class SessionNotFound(TetherError):
    code = -32002
    default_message = "unknown session"


class SessionBusy(TetherError):
    code = -32010
    default_message = "a turn is already running in this session"


class NoProviderConfigured(TetherError):
    code = -32011
    default_message = "no model provider is configured"


class ProviderFailed(TetherError):
    code = -32012
    default_message = "the model provider failed"


class ConfigInvalid(TetherError):
    code = -32013
    default_message = "invalid configuration"


class WorkspaceInvalid(TetherError):
    code = -32014
    default_message = "invalid workspace"


class StorageFailed(TetherError):
    code = -32015
    default_message = "the history database cannot be used"


ERROR_CLASSES: tuple[type[TetherError], ...] = (
    ParseError,
    InvalidRequest,
    MethodNotFound,
    InvalidParams,
    InternalError,
    RequestCancelled,
    SessionNotFound,
    SessionBusy,
    NoProviderConfigured,
    ProviderFailed,
    ConfigInvalid,
    WorkspaceInvalid,
    StorageFailed,
)
