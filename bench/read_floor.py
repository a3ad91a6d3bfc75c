"""What reading one reply costs at each layer below Tether, against the same paced server.

    .venv/bin/python bench/read_floor.py [--turns 6] [--deltas 10000] [--pace-us 100]

Against bench/fake_model.py in `per-event` mode (one SSE event per send, paced), three
readers in this process, alternating, each reading the OpenAI reply to its end without
parsing it: httpx (`aiter_raw`: httpcore, h11, anyio), an anyio socket stream (what
httpcore reads from: `receive()` in a loop), and an asyncio `Protocol` (the event loop's
own `data_received`). Reported: CPU of this process per reply and per read (medians,
the first two of each are warm-up), and reads per reply. It says what reading below
httpcore would save when a server's events arrive one or a few per read. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

import anyio
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from typing import TYPE_CHECKING

from fake_model import FakeModel

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

REQUEST = (
    b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
    b"content-length: 2\r\n\r\n{}"
)


async def by_httpx(server: FakeModel) -> int:
    reads = 0
    async with (
        httpx.AsyncClient(timeout=30.0) as client,
        client.stream("POST", server.url + "/v1/chat/completions", json={}) as response,
    ):
        async for _chunk in response.aiter_raw():
            reads += 1
    return reads


async def by_anyio(server: FakeModel) -> int:
    reads = 0
    async with await anyio.connect_tcp("127.0.0.1", server.port) as stream:
        await stream.send(REQUEST)
        try:
            while True:
                await stream.receive(65536)
                reads += 1
        except anyio.EndOfStream:
            return reads


class _Counting(asyncio.Protocol):
    def __init__(self) -> None:
        self.reads = 0
        self.done = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.reads += 1

    def connection_lost(self, exc: Exception | None) -> None:
        self.done.set_result(None)


async def by_protocol(server: FakeModel) -> int:
    transport, protocol = await asyncio.get_running_loop().create_connection(_Counting, "127.0.0.1", server.port)
    transport.write(REQUEST)
    await protocol.done
    return protocol.reads


async def run(turns: int, deltas: int, pace_us: float) -> dict[str, dict[str, float]]:
    readers: dict[str, Callable[[FakeModel], Awaitable[int]]] = {
        "httpx": by_httpx,
        "anyio_stream": by_anyio,
        "asyncio_protocol": by_protocol,
    }
    server = FakeModel(deltas, max_requests=len(readers) * turns + 4, mode="per-event", pace_us=pace_us)
    samples: dict[str, list[tuple[float, int]]] = {name: [] for name in readers}
    try:
        for _ in range(turns):
            for name, read in readers.items():
                c0 = time.process_time()
                reads = await read(server)
                samples[name].append(((time.process_time() - c0) * 1000, reads))
                server.next_request()
    finally:
        server.close()
    out = {}
    for name, values in samples.items():
        cpu = statistics.median(v[0] for v in values[2:])
        reads = statistics.median(v[1] for v in values[2:])
        out[name] = {"cpu_ms": round(cpu, 1), "reads": reads, "cpu_us_per_read": round(cpu * 1000 / reads, 1)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--deltas", type=int, default=10_000)
    parser.add_argument("--pace-us", type=float, default=100.0)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.turns, args.deltas, args.pace_us)), indent=2))


if __name__ == "__main__":
    main()
