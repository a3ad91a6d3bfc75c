"""The `replay` provider: plays a recorded cassette back through the real adapter.

Owns: a transport that answers each request with the next recorded response, chunk by chunk (at once, or
paced by `TETHER_REPLAY_SPEED`), and a readable diff when a request differs from the recorded one.
Must not: change the adapter it runs, or answer a request that differs from the recording.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import anyio

from tether_protocol import ConfigInvalid, JsonObject

from .base import ModelRequest, Provider, ProviderError, ProviderEvent
from .http import RetryPolicy
from .record import CASSETTE_VERSION, decode_chunk
from .wire import ReadTimeout, RemoteProtocolError, Response


async def _replayed(chunks: list[list[Any]], speed: float, ended: str | None = None) -> AsyncIterator[bytes]:
    previous = 0.0
    for item in chunks:
        elapsed, data = decode_chunk(item)
        if speed > 0 and elapsed > previous:
            await anyio.sleep((elapsed - previous) / 1000.0 / speed)
        previous = elapsed
        yield data
    if ended == "connection":
        raise RemoteProtocolError("peer closed connection (as recorded)")
    if ended == "timeout":
        raise ReadTimeout("read timed out (as recorded)")


class ReplayTransport:
    """A `wire.Transport` answering each request with the next recorded response."""

    def __init__(self, exchanges: list[JsonObject], source: str, speed: float = 0.0) -> None:
        self.exchanges = list(exchanges)
        self.source = source
        self.speed = speed
        self.served = 0

    async def open(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        if not self.exchanges:
            raise ProviderError(
                f"replay: {self.source} has no more recorded exchanges (served {self.served}); "
                f"the session made more model calls than were recorded — record it again",
                kind="replay_mismatch",
            )
        exchange = self.exchanges.pop(0)
        sent = json.loads(body or b"null")
        if sent != exchange["request"]:
            raise ProviderError(
                f"replay: request {self.served + 1} differs from the one recorded in "
                f"{self.source}:\n{request_diff(exchange['request'], sent)}",
                kind="replay_mismatch",
            )
        self.served += 1
        chunks = _replayed(exchange.get("chunks", []), self.speed, exchange.get("ended"))
        return Response(exchange["status"], exchange.get("headers") or {}, chunks)

    async def aclose(self) -> None:
        pass


def request_diff(recorded: Any, sent: Any, limit: int = 60) -> str:
    a = json.dumps(recorded, indent=1, sort_keys=True).splitlines()
    b = json.dumps(sent, indent=1, sort_keys=True).splitlines()
    lines = list(difflib.unified_diff(a, b, "recorded", "sent", lineterm="", n=2))
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more diff lines)"]
    return "\n".join(lines)


class ReplayProvider(Provider):
    name = "replay"

    def __init__(self, inner: Provider, transport: ReplayTransport) -> None:
        self.inner = inner
        self.transport = transport
        self.model = inner.model
        self.context_window = inner.context_window

    @classmethod
    def from_file(cls, path: Path, *, retry: RetryPolicy | None = None, speed: float | None = None) -> ReplayProvider:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
            header = json.loads(lines[0])
            exchanges = [json.loads(line) for line in lines[1:] if line.strip()]
        except (OSError, IndexError, ValueError) as exc:
            raise ConfigInvalid(f"replay: cannot read cassette {path}: {exc}") from None
        if header.get("cassette") != CASSETTE_VERSION:
            raise ConfigInvalid(
                f"replay: {path} is cassette version {header.get('cassette')!r}; this tether "
                f"reads version {CASSETTE_VERSION}"
            )
        if speed is None:
            speed = float(os.environ.get("TETHER_REPLAY_SPEED", "0") or 0)
        transport = ReplayTransport(exchanges, str(path), speed)
        # Retries are part of what was recorded; replay them exactly, without waiting.
        policy = RetryPolicy(max_retries=(retry or RetryPolicy()).max_retries, wait_scale=0.0)
        kind = header.get("provider")
        base_url = header.get("base_url") or "http://replay.invalid"
        inner: Provider
        if kind == "openai":
            from .openai import OpenAIProvider

            inner = OpenAIProvider(model=header.get("model", ""), base_url=base_url, retry=policy, transport=transport)
        elif kind == "anthropic":
            from .anthropic import AnthropicProvider

            inner = AnthropicProvider(model=header.get("model", ""), base_url=base_url, retry=policy, transport=transport)
        else:
            raise ConfigInvalid(f"replay: {path} records provider {kind!r}; expected openai or anthropic")
        return cls(inner, transport)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        async for event in self.inner.stream(request):
            yield event

    async def aclose(self) -> None:
        await self.inner.aclose()
