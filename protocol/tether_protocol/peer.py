"""One JSON-RPC 2.0 peer for both ends of a Tether connection (daemon, Python client, bench).

Owns: classifying messages (top level only), one table of `Route`s, one response per request,
handler errors as error responses (a bug: -32603 with a log reference), requests both ways
with cancellation (late replies ignored), bytes to messages (`MessageReader`). Must not: do I/O
(an `Outbox` writes), know Tether's methods, or import a message module (the start path runs it).
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._errors import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ParseError,
    RequestCancelled,
    TetherError,
)
from ._json import JsonObject, dumps
from ._reader import MessageReader
from ._rpc_types import (
    CancelStyle,
    Handler,
    Later,
    NotificationCallback,
    Outbox,
    PeerOptions,
    RawResult,
    RequestCallback,
    RequestFailed,
    Route,
    current_request_id,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = [
    "CancelStyle",
    "Handler",
    "JsonRpcPeer",
    "Later",
    "MessageReader",
    "NotificationCallback",
    "Outbox",
    "PeerOptions",
    "RawResult",
    "RequestCallback",
    "RequestFailed",
    "Route",
    "current_request_id",
]

log = logging.getLogger("tether.rpc")


@dataclass(slots=True)
class _Incoming:
    task: asyncio.Task[None]
    route: Route
    params: Any


class JsonRpcPeer:
    def __init__(
        self,
        routes: Mapping[str, Route] | None = None,
        *,
        options: PeerOptions | None = None,
        on_request: RequestCallback | None = None,
        on_notification: NotificationCallback | None = None,
    ) -> None:
        self.routes: dict[str, Route] = dict(routes or {})
        self.options = options or PeerOptions()
        self.on_request = on_request
        self.on_notification = on_notification
        self.out: Outbox | None = None
        self._incoming: dict[int | str, _Incoming] = {}
        # our requests: method, the future its answer resolves, what runs as it is read
        self._outgoing: dict[int | str, tuple[str, asyncio.Future[Any], Callable[[], None] | None]] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._ids = itertools.count(1)
        self.shutting_down = False
        self.unknown_responses = 0
        self.received: list[JsonObject] = []

    def attach(self, out: Outbox) -> None:
        self.out = out

    # ---- incoming ----------------------------------------------------------------

    def handle_message(self, message: Any) -> None:
        """Classify one parsed message (or a `ParseError` / over-limit `InvalidRequest` from the reader)."""
        if isinstance(message, (ParseError, InvalidRequest)):
            self._reply_error(None, message)
            return
        if not isinstance(message, dict):
            kind = "a batch (arrays are not supported)" if isinstance(message, list) else "not an object"
            self._reply_error(None, InvalidRequest(f"invalid request: the message is {kind}"))
            return
        msg_id = message.get("id")
        id_ok = isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool)
        problem = _envelope_problem(message, id_ok)
        if problem is not None:
            if problem == "response":
                self._handle_response(message)
            else:
                self._reply_error(msg_id if id_ok else None, InvalidRequest(problem))
            return
        if isinstance(msg_id, (int, str)):  # a request (`_envelope_problem` checked the id)
            self._handle_request(msg_id, message["method"], message.get("params"))
        else:
            self._handle_notification(message["method"], message.get("params"))

    def _handle_request(self, msg_id: int | str, method: str, params: Any) -> None:
        if msg_id in self._incoming:
            self._reply_error(
                msg_id, InvalidRequest(f"invalid request: id {msg_id!r} is already in use by a running request")
            )
            return
        if self.shutting_down:
            self._reply_error(
                msg_id, InvalidRequest(f"invalid request: the server is shutting down; {method} was not run")
            )
            return
        route = self.routes.get(method)
        if route is None and self.on_request is not None:
            route = _callback_route(method, self.on_request)
        if route is None or route.notification:
            self._reply_error(msg_id, MethodNotFound(f"method not found: {method}"))
            return
        try:
            typed = self.structure_params(route, params)
        except TetherError as exc:
            self._reply_error(msg_id, exc)
            return
        ctx = contextvars.copy_context()
        ctx.run(current_request_id.set, msg_id)
        task = asyncio.get_running_loop().create_task(self._run_request(msg_id, route, typed), context=ctx)
        self._incoming[msg_id] = _Incoming(task, route, typed)
        task.add_done_callback(lambda done: self._cancelled_before_start(msg_id, route, done))

    def _cancelled_before_start(self, msg_id: int | str, route: Route, task: asyncio.Task[None]) -> None:
        """A cancel read with its request (one chunk, under load) cancels the task before it
        starts: `_run_request` never runs to answer, so the request is answered here."""
        if task.cancelled():
            self._finish(msg_id, error=RequestCancelled(f"request cancelled: {route.method}"))

    async def _run_request(self, msg_id: int | str, route: Route, params: Any) -> None:
        try:
            if route.method in self.options.failpoints:
                raise RuntimeError(f"failpoint hit in {route.method}")
            result = await route.handler(params)
        except asyncio.CancelledError:
            self._finish(msg_id, error=RequestCancelled(f"request cancelled: {route.method}"))
            return  # swallowed on purpose: this task exists only to answer the request
        except (TetherError, RequestFailed) as exc:
            self._finish(msg_id, error=exc)
        except Exception as exc:
            known = self.options.known_failure
            failure = known(route.method, exc) if known is not None else None
            if failure is not None:
                self._finish(msg_id, error=failure)
                return
            ref = os.urandom(4).hex()  # (not `secrets`: its hmac and hashlib cost the start 2 ms)
            log.exception("internal error in %s (ref %s)", route.method, ref)
            message = f"internal error in {route.method} (ref {ref}; details in {self.options.log_name})"
            self._finish(msg_id, error=InternalError(message))
        else:
            self._finish(msg_id, result=result)

    def _finish(
        self, msg_id: int | str, *, result: Any = None, error: TetherError | RequestFailed | None = None
    ) -> None:
        if self._incoming.pop(msg_id, None) is None:
            return  # already answered
        if error is not None:
            self._reply_error(msg_id, error)
        elif isinstance(result, RawResult):
            body = result.json.encode("utf-8", "replace")
            self._send_body(b'{"jsonrpc":"2.0","id":' + dumps(msg_id) + b',"result":' + body + b"}")
        else:  # a Struct result is written by the one encoder (`_json.dumps`)
            self._send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def structure_params(self, route: Route, params: Any) -> Any:
        """`params` as its route's handler takes them (InvalidParams naming what is wrong)."""
        if params is not None and not isinstance(params, dict):
            raise InvalidParams(f"invalid params for {route.method}: params must be an object")
        cls = route.params_cls
        if cls is None:
            return params
        if isinstance(cls, Later):  # imported once: the route keeps the class, no look-up per call
            cls = route.params_cls = cls.load()
        from ._codec import convert  # (msgspec: loaded with the classes)

        return convert({} if params is None else params, cls, method=route.method)

    def _handle_notification(self, method: str, params: Any) -> None:
        if method in ("$/cancelRequest", "$/cancel_request"):
            # LSP: `$/cancelRequest {id}`; ACP: `$/cancel_request {requestId}`. Either works.
            if isinstance(params, dict):
                self._cancel_incoming(params.get("requestId", params.get("id")))
            if self.on_notification is not None:  # an application may show it, too
                self.on_notification(method, params)
            return
        route = self.routes.get(method)
        if route is None or not route.notification:
            if self.on_notification is not None:
                self.on_notification(method, params)
            else:  # `$/` notifications are optional by LSP's rules; others are worth a note
                (log.debug if method.startswith("$/") else log.info)("ignoring notification %s", method)
            return
        try:
            typed = self.structure_params(route, params)
        except TetherError as exc:
            log.warning("dropping notification %s: %s", method, exc.message)
            return
        task = asyncio.get_running_loop().create_task(_run_notification(route, typed))
        self._background.add(task)  # held while it runs, dropped when done
        task.add_done_callback(self._background.discard)

    def _cancel_incoming(self, msg_id: Any) -> None:
        entry = self._incoming.get(msg_id) if isinstance(msg_id, (int, str)) else None
        if entry is None:
            self._withdrawn(msg_id)
        elif entry.route.on_cancel is not None:
            entry.route.on_cancel(entry.params)
        else:
            entry.task.cancel()

    def _withdrawn(self, msg_id: Any) -> None:
        """The other side took back a request of ours (ACP's `$/cancel_request` goes both ways)
        and will not answer it: it fails -32800. Only ids of our own spelling (`id_prefix`):
        a bare number may be a late cancel of the other side's own request of that number."""
        ours = isinstance(msg_id, str) and self.options.id_prefix is not None
        entry = self._outgoing.pop(msg_id, None) if ours else None
        if entry is None:
            log.debug("cancel for %r: no such running request", msg_id)
            return
        method, future, _on_answer = entry
        if not future.done():
            error = RequestCancelled("cancelled by the other side without an answer").to_error()
            future.set_exception(RequestFailed(method, error))

    def _handle_response(self, message: JsonObject) -> None:
        msg_id = message.get("id")
        entry = self._outgoing.pop(msg_id, None) if isinstance(msg_id, (int, str)) else None
        if entry is None:
            # A reply to a request we stopped waiting for: not an error.
            self.unknown_responses += 1
            if self.options.keep_orphans:
                self.received.append(message)
            log.debug("ignoring response to unknown or abandoned request %r", msg_id)
            return
        method, future, on_answer = entry
        if on_answer is not None:
            on_answer()
        if future.done():
            return
        error = message.get("error")
        if error is not None:
            future.set_exception(RequestFailed(method, error if isinstance(error, dict) else {"message": str(error)}))
        else:
            future.set_result(message.get("result"))

    # ---- outgoing ----------------------------------------------------------------

    def notify(self, method: str, params: Any = None) -> None:
        message: JsonObject = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def request_future(
        self, method: str, params: Any = None, *, on_answer: Callable[[], None] | None = None
    ) -> tuple[int | str, asyncio.Future[Any]]:
        """Send a request; its answer resolves the future (an error raises `RequestFailed`).
        ``on_answer`` runs as the answer is read, before any later message is handled
        (the awaiting task resumes later: messages read with the answer come first)."""
        n = next(self._ids)
        request_id: int | str = n if self.options.id_prefix is None else f"{self.options.id_prefix}{n}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._outgoing[request_id] = (method, future, on_answer)
        message: JsonObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)
        return request_id, future

    async def request(self, method: str, params: Any = None) -> Any:
        """Ask the other side something and wait for its answer. Cancelling the awaiting
        task tells the other side to drop the request; a reply that still arrives is ignored."""
        request_id, future = self.request_future(method, params)
        try:
            return await future
        except asyncio.CancelledError:
            if self._outgoing.pop(request_id, None) is not None:
                self._send_cancel(request_id)
            raise

    def _send_cancel(self, request_id: int | str) -> None:
        if self.options.cancel_style == "acp":
            self.notify("$/cancel_request", {"requestId": request_id})
        elif self.options.cancel_style == "lsp":
            self.notify("$/cancelRequest", {"id": request_id})

    def _reply_error(self, msg_id: Any, error: TetherError | RequestFailed) -> None:
        self._send({"jsonrpc": "2.0", "id": msg_id, "error": error.to_error()})

    def _send(self, message: JsonObject) -> None:
        if self.out is not None:
            self.out.send(message)

    def _send_body(self, body: bytes) -> None:
        if self.out is not None:
            self.out.send_body(body)

    # ---- lifecycle ---------------------------------------------------------------

    async def wait_idle(self, timeout: float) -> None:
        """Let requests already running finish (a closed input must not lose them)."""
        tasks = [entry.task for entry in self._incoming.values()]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    def cancel_all(self) -> None:
        """We are closing the connection: every handler stops, and every request of ours
        fails as on `connection_lost` (its answer can never come: one way to fail, not two)."""
        for entry in list(self._incoming.values()):
            entry.task.cancel()
        for task in list(self._background):
            task.cancel()
        self._fail_outgoing("the connection is closing")

    def connection_lost(self, who: str = "the other side") -> None:
        """The connection closed: every request of ours fails, every handler stops."""
        self._fail_outgoing(f"{who} closed the connection")
        for entry in list(self._incoming.values()):
            entry.task.cancel()

    def _fail_outgoing(self, why: str) -> None:
        """Each request of ours still waiting raises ConnectionError naming its method."""
        for method, future, _on_answer in self._outgoing.values():
            if not future.done():
                future.set_exception(ConnectionError(f"{method}: {why}"))
        self._outgoing.clear()

    @property
    def running_requests(self) -> int:
        return len(self._incoming)

    @property
    def outgoing_requests(self) -> int:
        return len(self._outgoing)

    @property
    def background_tasks(self) -> int:
        return len(self._background)


def _envelope_problem(message: JsonObject, id_ok: bool) -> str | None:
    """What is wrong with a message's envelope; "response" for a response; None for a
    well-formed request or notification."""
    if message.get("jsonrpc") != "2.0":
        return 'invalid request: "jsonrpc" must be "2.0"'
    method = message.get("method")
    if method is None:
        if "id" in message and ("result" in message or "error" in message):
            return "response"
        return "invalid request: no method, and not a response"
    if not isinstance(method, str):
        return "invalid request: method must be a string"
    if "id" in message and not id_ok:
        return "invalid request: id must be a string or an integer"
    return None


def _callback_route(method: str, callback: RequestCallback) -> Route:
    async def handler(params: Any) -> Any:
        return await callback(method, params)

    return Route(method, handler)


async def _run_notification(route: Route, params: Any) -> None:
    try:
        await route.handler(params)
    except asyncio.CancelledError:
        pass
    except Exception:
        log.exception("notification handler %s failed", route.method)
