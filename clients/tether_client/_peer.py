"""A minimal asyncio JSON-RPC 2.0 peer over a pair of byte streams.

Owns: framing (via `tether_protocol`), request ids and futures, routing notifications
to subscribers and server->client requests to one callback. Must not: know Tether's
methods (that is `_client.py`).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from typing import Any

from tether_protocol._framing import Framing, decoder_for, encoder_for
from tether_protocol._json import dumps, loads

RequestHandler = Callable[[str, Any], Awaitable[Any]]
NotificationHandler = Callable[[str, Any], None]


class ClientError(Exception):
    """The daemon answered a request with a JSON-RPC error."""

    def __init__(self, method: str, error: dict[str, Any]) -> None:
        self.method = method
        self.code: int = int(error.get("code", 0))
        self.message: str = str(error.get("message", ""))
        self.data: Any = error.get("data")
        super().__init__(f"{method}: {self.message} (code {self.code})")


class JsonRpcPeer:
    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        framing: Framing = "lsp",
        on_notification: NotificationHandler | None = None,
        on_request: RequestHandler | None = None,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._decoder = decoder_for(framing)
        self._encode = encoder_for(framing)
        self._ids = itertools.count(1)
        self._pending: dict[Any, tuple[str, asyncio.Future[Any]]] = {}
        self.on_notification = on_notification
        self.on_request = on_request
        self.received: list[dict[str, Any]] = []  # errors with no id (parse errors) land here
        self._task: asyncio.Task[None] | None = None
        # the daemon's requests being answered (held: the loop keeps only weak references)
        self._answering: set[asyncio.Task[None]] = set()
        self.closed = asyncio.Event()

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._read_loop())

    async def _read_loop(self) -> None:
        try:
            while True:
                data = await self._reader.read(1 << 16)
                if not data:
                    break
                for body in self._decoder.feed(data):
                    self._dispatch(loads(body))
        finally:
            for method, future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError(f"{method}: the daemon closed the connection"))
            self._pending.clear()
            for task in self._answering:  # nobody is left to take the answers
                task.cancel()
            self.closed.set()

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" in message:
            if "id" in message:
                task = asyncio.get_running_loop().create_task(self._answer(message))
                self._answering.add(task)
                task.add_done_callback(self._answering.discard)
            elif self.on_notification is not None:
                self.on_notification(message["method"], message.get("params"))
            return
        entry = self._pending.pop(message.get("id"), None)
        if entry is None:
            self.received.append(message)
            return
        method, future = entry
        if future.done():
            return
        if "error" in message:
            future.set_exception(ClientError(method, message["error"]))
        else:
            future.set_result(message.get("result"))

    async def _answer(self, message: dict[str, Any]) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            if self.on_request is None:
                raise ClientError(message["method"], {"code": -32601, "message": "method not found"})
            reply["result"] = await self.on_request(message["method"], message.get("params"))
        except ClientError as exc:
            reply["error"] = {"code": exc.code, "message": exc.message}
        except Exception as exc:
            reply["error"] = {"code": -32603, "message": f"client error: {exc}"}
        self.send(reply)

    def send(self, message: dict[str, Any]) -> None:
        self._writer.write(self._encode(dumps(message)))

    def send_raw(self, data: bytes) -> None:
        self._writer.write(data)

    def request_future(self, method: str, params: Any = None) -> tuple[int, asyncio.Future[Any]]:
        msg_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = (method, future)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return msg_id, future

    async def request(self, method: str, params: Any = None) -> Any:
        _id, future = self.request_future(method, params)
        return await future

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    async def close(self) -> None:
        if not self._writer.is_closing():
            self._writer.close()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), 5)
            except (asyncio.TimeoutError, Exception):
                self._task.cancel()
