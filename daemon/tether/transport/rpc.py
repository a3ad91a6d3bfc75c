"""JSON-RPC 2.0 dispatch with Tether's guarantees, on top of pygls' protocol class.

Owns: classifying each incoming message (top level only), routing it through one method
table, validating params into typed objects, running handlers as tasks in arrival order,
and the rule that every request gets exactly one response. Also server->client requests
and their futures. Must not: know session or agent semantics; handlers live in
`tether.server`.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import logging
import os
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import cattrs
from pygls.protocol.json_rpc import JsonRPCProtocol
from tether_protocol._converter import structure, unstructure
from tether_protocol._errors import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    RequestCancelled,
    TetherError,
)

from .connection import Connection, encode_json

log = logging.getLogger("tether.rpc")

Handler = Callable[[Any], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class RawResult:
    """A handler's result already encoded as JSON text (compact, as `encode_json` writes
    it): sent as the `result` without decoding and encoding it again."""

    json: str


@dataclass(slots=True)
class Route:
    method: str
    handler: Handler
    params_cls: type | None
    notification: bool = False
    # Requests that answer their own cancellation (session/prompt answers
    # `{"stopReason": "cancelled"}` rather than a -32800 error).
    on_cancel: Callable[[Any], None] | None = None


# Test hook: methods named in TETHER_FAILPOINTS raise a bug-like error, so the tests can
# check what a client sees when a handler has a bug (-32603, no traceback).
_FAILPOINTS = frozenset(filter(None, os.environ.get("TETHER_FAILPOINTS", "").split(",")))


class ClientRequestFailed(Exception):
    """The client answered one of our requests with an error."""

    def __init__(self, method: str, error: dict[str, Any]) -> None:
        self.method = method
        self.code = error.get("code")
        self.error_message = str(error.get("message", ""))
        super().__init__(f"{method} failed: {self.code} {self.error_message}")


current_request_id: contextvars.ContextVar[int | str | None] = contextvars.ContextVar(
    "tether_request_id", default=None
)


class _NullServer:
    """pygls' protocol wants a server object; ours has nothing for it to do."""

    def _report_server_error(self, error: Exception, source: Any) -> None:
        log.error("%s", error)


class TetherRPC(JsonRPCProtocol):
    def __init__(self, routes: dict[str, Route]) -> None:
        super().__init__(_NullServer(), cattrs.Converter())  # type: ignore[arg-type]
        self.routes = routes
        self.conn: Connection | None = None
        self._incoming: dict[int | str, tuple[asyncio.Task[Any], Route, Any]] = {}
        self._outgoing: dict[str, tuple[str, asyncio.Future[Any]]] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._ids = itertools.count(1)
        self.shutting_down = False
        self.unknown_responses = 0
        # True once an ACP client initialized: our cancels then use ACP's spelling.
        self.acp_peer = False

    def attach(self, conn: Connection) -> None:
        self.conn = conn

    # ---- pygls surface, kept so code written for pygls reads the same ---------------

    def handle_message(self, message: Any) -> None:  # type: ignore[override]
        """Classify one parsed message; only its top level is looked at."""
        if not isinstance(message, dict):
            kind = "a batch (arrays are not supported)" if isinstance(message, list) else "not an object"
            self._reply_error(None, InvalidRequest(f"invalid request: the message is {kind}"))
            return
        msg_id = message.get("id")
        has_id = "id" in message
        id_ok = isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool)
        if message.get("jsonrpc") != "2.0":
            self._reply_error(
                msg_id if id_ok else None,
                InvalidRequest('invalid request: "jsonrpc" must be "2.0"'),
            )
            return
        method = message.get("method")
        if method is None:
            if has_id and ("result" in message or "error" in message):
                self._handle_response(msg_id, message.get("result"), message.get("error"))
            else:
                self._reply_error(
                    msg_id if id_ok else None,
                    InvalidRequest("invalid request: no method, and not a response"),
                )
            return
        if not isinstance(method, str):
            self._reply_error(msg_id if id_ok else None, InvalidRequest("invalid request: method must be a string"))
            return
        if has_id and not id_ok:
            self._reply_error(None, InvalidRequest("invalid request: id must be a string or an integer"))
            return
        params = message.get("params")
        if has_id:
            self._handle_request(msg_id, method, params)
        else:
            self._handle_notification(method, params)

    def notify(self, method: str, params: Any = None) -> None:  # type: ignore[override]
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    async def send_request_async(  # type: ignore[override]
        self, method: str, params: Any = None, msg_id: Any = None
    ) -> Any:
        """Ask the client something and wait for its answer.

        Cancelling the awaiting task tells the client to drop the request
        (`$/cancelRequest`); a reply that still arrives afterwards is ignored.
        """
        loop = asyncio.get_running_loop()
        request_id = str(msg_id) if msg_id is not None else f"tether-{next(self._ids)}"
        future: asyncio.Future[Any] = loop.create_future()
        self._outgoing[request_id] = (method, future)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)
        try:
            return await future
        except asyncio.CancelledError:
            if self._outgoing.pop(request_id, None) is not None:
                # tell the client to drop it, in the spelling its protocol uses
                if self.acp_peer:
                    self.notify("$/cancel_request", {"requestId": request_id})
                else:
                    self.notify("$/cancelRequest", {"id": request_id})
            raise

    # ---- requests ----------------------------------------------------------------

    def _handle_request(self, msg_id: int | str, method: str, params: Any) -> None:  # type: ignore[override]
        if msg_id in self._incoming:
            self._reply_error(msg_id, InvalidRequest(f"invalid request: id {msg_id!r} is already in use by a running request"))
            return
        if self.shutting_down:
            self._reply_error(msg_id, InvalidRequest(f"invalid request: the server is shutting down; {method} was not run"))
            return
        route = self.routes.get(method)
        if route is None or route.notification:
            self._reply_error(msg_id, MethodNotFound(f"method not found: {method}"))
            return
        try:
            typed = self._structure(route, params)
        except TetherError as exc:
            self._reply_error(msg_id, exc)
            return
        ctx = contextvars.copy_context()
        ctx.run(current_request_id.set, msg_id)
        task = asyncio.get_running_loop().create_task(
            self._run_request(msg_id, route, typed), context=ctx
        )
        self._incoming[msg_id] = (task, route, typed)

    async def _run_request(self, msg_id: int | str, route: Route, params: Any) -> None:
        try:
            if route.method in _FAILPOINTS:
                raise RuntimeError(f"failpoint hit in {route.method}")
            result = await route.handler(params)
        except asyncio.CancelledError:
            self._finish(msg_id, error=RequestCancelled(f"request cancelled: {route.method}"))
            # Swallowed on purpose: this task exists only to answer the request.
            return
        except TetherError as exc:
            self._finish(msg_id, error=exc)
        except Exception:
            ref = secrets.token_hex(4)
            log.exception("internal error in %s (ref %s)", route.method, ref)
            self._finish(
                msg_id,
                error=InternalError(
                    f"internal error in {route.method} (ref {ref}; details in the daemon log)"
                ),
            )
        else:
            self._finish(msg_id, result=result)

    def _finish(self, msg_id: int | str, *, result: Any = None, error: TetherError | None = None) -> None:
        if self._incoming.pop(msg_id, None) is None:
            return  # already answered
        if error is not None:
            self._reply_error(msg_id, error)
            return
        if isinstance(result, RawResult):
            if self.conn is not None:
                body = result.json.encode("utf-8", "replace")
                self.conn.send_body(b'{"jsonrpc":"2.0","id":' + encode_json(msg_id) + b',"result":' + body + b"}")
            return
        if hasattr(result, "__attrs_attrs__"):
            result = unstructure(result)
        self._send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def _structure(self, route: Route, params: Any) -> Any:
        if params is not None and not isinstance(params, dict):
            raise InvalidParams(f"invalid params for {route.method}: params must be an object")
        if route.params_cls is None:
            return params
        return structure(params, route.params_cls, method=route.method)

    # ---- notifications -----------------------------------------------------------

    def _handle_notification(self, method: str, params: Any) -> None:  # type: ignore[override]
        if method in ("$/cancelRequest", "$/cancel_request"):
            # LSP: `$/cancelRequest {id}`; ACP: `$/cancel_request {requestId}`. Either works.
            if isinstance(params, dict):
                self._cancel_incoming(params.get("requestId", params.get("id")))
            return
        route = self.routes.get(method)
        if route is None or not route.notification:
            # `$/` notifications are optional by LSP's rules; others are worth a note.
            (log.debug if method.startswith("$/") else log.info)("ignoring notification %s", method)
            return
        try:
            typed = self._structure(route, params)
        except TetherError as exc:
            log.warning("dropping notification %s: %s", method, exc.message)
            return
        task = asyncio.get_running_loop().create_task(self._run_notification(route, typed))
        # Keep a reference only while it runs (pygls 2.1.1 kept every one forever).
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _run_notification(self, route: Route, params: Any) -> None:
        try:
            await route.handler(params)
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("notification handler %s failed", route.method)

    def _cancel_incoming(self, msg_id: Any) -> None:
        entry = self._incoming.get(msg_id)
        if entry is None:
            log.debug("$/cancelRequest for %r: no such running request", msg_id)
            return
        task, route, params = entry
        if route.on_cancel is not None:
            route.on_cancel(params)
        else:
            task.cancel()

    # ---- responses to our requests ------------------------------------------------

    def _handle_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:  # type: ignore[override]
        entry = self._outgoing.pop(str(msg_id), None) if msg_id is not None else None
        if entry is None:
            # A reply to a request we stopped waiting for (pygls issue 621): not an error.
            self.unknown_responses += 1
            log.debug("ignoring response to unknown or abandoned request %r", msg_id)
            return
        method, future = entry
        if future.done():
            return
        if error is not None:
            future.set_exception(ClientRequestFailed(method, error if isinstance(error, dict) else {"message": str(error)}))
        else:
            future.set_result(result)

    # ---- output ------------------------------------------------------------------

    def _reply_error(self, msg_id: Any, error: TetherError) -> None:
        self._send({"jsonrpc": "2.0", "id": msg_id, "error": error.to_error()})

    def _send(self, message: dict[str, Any]) -> None:
        if self.conn is not None:
            self.conn.send(message)

    def _send_data(self, data: Any) -> None:  # pygls' writer entry point, routed to ours
        self._send(data)

    # ---- lifecycle ---------------------------------------------------------------

    async def wait_idle(self, timeout: float) -> None:
        """Let requests already running finish (a closed stdin must not lose them)."""
        tasks = [task for task, _route, _params in self._incoming.values()]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    def cancel_all(self) -> None:
        for task, _route, _params in list(self._incoming.values()):
            task.cancel()
        for _method, future in self._outgoing.values():
            future.cancel()
        self._outgoing.clear()

    @property
    def running_requests(self) -> int:
        return len(self._incoming)
