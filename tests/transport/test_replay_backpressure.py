"""A long replay (`session/load`) written to a client that does not read: the daemon
stops building it at the pipe's high-water mark instead of queueing all of it in memory,
and goes on, every frame in order, once the client reads (issue 31: big histories)."""

from __future__ import annotations

import asyncio
import json
import os

from tether.handlers.loading import send_in_batches
from tether.transport.connection import Connection


def _frames(count: int):
    for n in range(count):
        yield json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {"n": n, "text": "x" * 400}}).encode()


async def test_a_replay_waits_for_a_client_that_stops_reading_then_sends_everything_in_order() -> None:
    client_reads, daemon_writes = os.pipe()
    daemon_reads, client_writes = os.pipe()
    conn = Connection(daemon_reads, daemon_writes, lambda _m: None, lambda: None, framing="ndjson")
    await conn.start()
    built = 0

    def counted(count: int):
        nonlocal built
        for frame in _frames(count):
            built += 1
            yield frame

    total = 20_000  # ~9 MB of frames, the pipe and the high-water mark hold well under 1 MB
    replay = asyncio.create_task(send_in_batches(conn, counted(total)))
    await asyncio.sleep(0.5)  # nobody reads
    assert not replay.done()
    assert built < total // 4, f"{built} of {total} frames were built for a client that reads nothing"

    received = bytearray()
    loop = asyncio.get_running_loop()
    while received.count(b"\n") < total:
        received += await loop.run_in_executor(None, os.read, client_reads, 1 << 20)
    await replay
    numbers = [json.loads(line)["params"]["n"] for line in bytes(received).splitlines()]
    assert numbers == list(range(total))
    conn.close()
    for fd in (client_reads, client_writes, daemon_reads):
        os.close(fd)
