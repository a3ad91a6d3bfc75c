"""Recording model exchanges to a cassette (`--record FILE`): JSON lines, a header then one line per exchange.

Owns: writing each exchange's request body, response status, retry headers and raw chunks with their
timing; no request headers, so no key reaches the file (`replay.py` plays it back byte for byte).
Must not: change what the provider sends or yields.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from tether_protocol import ConfigInvalid, JsonObject

from .base import ModelRequest, Provider, ProviderError, ProviderEvent

CASSETTE_VERSION = 1
_KEPT_HEADERS = ("content-type", "retry-after", "retry-after-ms", "x-should-retry")


def encode_chunk(elapsed_ms: float, chunk: bytes) -> list[Any]:
    try:
        return [round(elapsed_ms, 3), chunk.decode("utf-8")]
    except UnicodeDecodeError:  # a chunk boundary inside a multi-byte character
        return [round(elapsed_ms, 3), {"latin1": chunk.decode("latin-1")}]


def decode_chunk(item: list[Any]) -> tuple[float, bytes]:
    elapsed, data = item
    if isinstance(data, dict):
        return float(elapsed), data["latin1"].encode("latin-1")
    return float(elapsed), data.encode("utf-8")


class RecordingProvider(Provider):
    def __init__(self, inner: Provider, path: Path) -> None:
        client = getattr(inner, "client", None)
        if client is None or not hasattr(client, "tap"):
            raise ConfigInvalid(
                f"--record works with the openai and anthropic providers, not {inner.name!r}"
            )
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.context_window = inner.context_window
        self.path = path
        self._pending: list[JsonObject] = []
        client.tap = self._tap
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.stat().st_size == 0:
            header = {
                "cassette": CASSETTE_VERSION,
                "provider": inner.name,
                "model": inner.model,
                "base_url": getattr(client, "base_url", ""),
            }
            path.write_text(json.dumps(header) + "\n", encoding="utf-8")

    def _tap(self, body: JsonObject) -> Callable[[int, dict[str, str]], Callable[[bytes], None]]:
        exchange: JsonObject = {"request": body, "status": None, "headers": {}, "chunks": []}
        self._pending.append(exchange)
        started = time.perf_counter()

        def on_response(status: int, headers: dict[str, str]) -> Callable[[bytes], None]:
            exchange["status"] = status
            exchange["headers"] = {k: v for k, v in headers.items() if k.lower() in _KEPT_HEADERS}
            chunks = exchange["chunks"]

            def on_chunk(chunk: bytes) -> None:
                chunks.append(encode_chunk((time.perf_counter() - started) * 1000, chunk))

            return on_chunk

        return on_response

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        try:
            async for event in self.inner.stream(request):
                yield event
        except ProviderError as exc:
            # A broken connection is part of what happened; replay reproduces it.
            if exc.kind in ("connection", "timeout") and self._pending:
                self._pending[-1]["ended"] = exc.kind
            raise
        finally:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        with self.path.open("a", encoding="utf-8") as out:
            for exchange in self._pending:
                if exchange["status"] is not None:
                    out.write(json.dumps(exchange, ensure_ascii=False) + "\n")
        self._pending.clear()

    async def aclose(self) -> None:
        self._flush()
        await self.inner.aclose()
