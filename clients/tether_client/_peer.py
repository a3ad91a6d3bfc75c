"""The client's end of the JSON-RPC peer, over a pair of asyncio streams.

Owns: reading the daemon's bytes into the shared peer (`tether_protocol.peer`: the same
classification, responses and cancellation the daemon uses) and writing its frames.
Must not: know Tether's methods (that is `_client.py`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from tether_protocol import Framing, dumps, encoder_for
from tether_protocol.peer import (
    JsonRpcPeer as _Peer,
)
from tether_protocol.peer import (
    MessageReader,
    NotificationCallback,
    PeerOptions,
    RequestCallback,
    RequestFailed,
)

# The daemon answered a request with a JSON-RPC error (`.code`, `.message`, `.data`).
ClientError = RequestFailed
RequestHandler = RequestCallback
NotificationHandler = NotificationCallback


class JsonRpcPeer(_Peer):
    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        framing: Framing = "lsp",
        on_notification: NotificationCallback | None = None,
        on_request: RequestCallback | None = None,
    ) -> None:
        options = PeerOptions(id_prefix=None, cancel_style="lsp", keep_orphans=True, log_name="the client's log")
        super().__init__(options=options, on_request=on_request, on_notification=on_notification)
        self._reader = reader
        self._writer = writer
        self._messages = MessageReader(framing, None)  # its own daemon: a dump may be larger
        self._encode = encoder_for(framing)
        self._task: asyncio.Task[None] | None = None
        self.closed = asyncio.Event()
        self.attach(self)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._read_loop())

    async def _read_loop(self) -> None:
        try:
            while True:
                data = await self._reader.read(1 << 16)
                if not data:
                    break
                for message in self._messages.feed(data):
                    self.handle_message(message)
        finally:
            self.connection_lost("the daemon")
            self.closed.set()

    # ---- Outbox ------------------------------------------------------------------

    def send(self, message: Any) -> None:
        self.send_body(dumps(message))

    def send_body(self, body: bytes) -> None:
        self._writer.write(self._encode(body))

    def send_raw(self, data: bytes) -> None:
        self._writer.write(data)

    async def close(self) -> None:
        if not self._writer.is_closing():
            self._writer.close()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), 5)
            except (asyncio.TimeoutError, Exception):
                self._task.cancel()
