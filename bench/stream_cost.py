"""What one streamed event costs an adapter, in-process, next to a plain client's cost for the same stream.

    .venv/bin/python bench/stream_cost.py [--turns 8] [--deltas 20000] [--server-mode bulk|per-event] [--pace-us U]
    PYTHONPATH=<old tree>/daemon:<old tree>/protocol .venv/bin/python bench/stream_cost.py   (before)

Against bench/fake_model.py's server (its own process, 127.0.0.1), per adapter (openai,
anthropic), alternating: the adapter's `stream()` read to the end, and the floor, a
plain httpx client reading the same reply line by line (`aiter_lines`, counting `data:`
lines, no JSON). Each is timed as CPU of this process (`time.process_time`, so other load
on the machine does not count) and as wall time; the first two of each are warm-up.
Medians are reported, in ms per reply and µs per event. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from fake_model import FakeModel

from tether.providers.anthropic import AnthropicProvider
from tether.providers.base import ModelRequest, Provider
from tether_protocol.conversation import messages_from_json

PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}


def provider(kind: str, url: str) -> Provider:
    if kind == "anthropic":
        return AnthropicProvider(model="bench", base_url=url, api_key="bench-not-a-key")
    from tether.providers.openai import OpenAIProvider

    return OpenAIProvider(model="bench", base_url=url + "/v1", api_key="bench-not-a-key")


async def adapter_once(p: Provider) -> tuple[float, float]:
    request = ModelRequest(
        system="bench",
        tools=[],
        messages=messages_from_json([{"role": "user", "content": [{"type": "text", "text": "stream a lot"}]}]),
    )
    t0, c0 = time.perf_counter(), time.process_time()
    async for _event in p.stream(request):
        pass
    return (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000


async def floor_once(client: httpx.AsyncClient, url: str) -> tuple[float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    async with client.stream("POST", url, json={"model": "bench", "stream": True}) as response:
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                pass
    return (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000


async def run(turns: int, deltas: int, mode: str = "bulk", pace_us: float = 0.0) -> dict[str, Any]:
    server = FakeModel(deltas, max_requests=4 * turns + 8, mode=mode, pace_us=pace_us)
    out: dict[str, Any] = {"deltas": deltas, "turns": turns, "server_mode": mode, "pace_us": pace_us}
    try:
        for kind in ("openai", "anthropic"):
            p = provider(kind, server.url)
            samples: dict[str, list[tuple[float, float]]] = {"adapter": [], "floor": []}
            async with httpx.AsyncClient(timeout=30.0) as client:
                for _ in range(turns):
                    samples["adapter"].append(await adapter_once(p))
                    samples["floor"].append(await floor_once(client, server.url + PATHS[kind]))
            await p.aclose()
            server.drain()
            out[kind] = {}
            for name, values in samples.items():
                wall, cpu = (statistics.median(v[i] for v in values[2:]) for i in (0, 1))
                out[kind][name] = {
                    "wall_ms": round(wall, 1),
                    "cpu_ms": round(cpu, 1),
                    "cpu_us_per_event": round(cpu * 1000 / deltas, 2),
                }
    finally:
        server.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--server-mode", choices=("bulk", "per-event"), default="bulk")
    parser.add_argument("--pace-us", type=float, default=0.0, help="per-event mode: µs between events")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.turns, args.deltas, args.server_mode, args.pace_us)), indent=2))


if __name__ == "__main__":
    main()
