"""The limit on one JSON-RPC message on the shared daemon's socket: a message over it is
answered with `-32600` and `id: null`, and the same window's next request is answered."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from message_frames import INIT, LIMIT, STATS, assert_refused, by_id, padded


async def test_the_shared_daemons_socket_refuses_an_over_limit_message_and_serves_on(windows, workspace: Path):
    await windows.open()  # starts the shared daemon
    [path] = windows.sockets()
    over = padded({"jsonrpc": "2.0", "id": 2, "method": "_tether/daemon/stats", "params": {}}, LIMIT + 1)
    preamble = b"TETHER-SHARED/1 " + os.fsencode(str(workspace)).hex().encode() + b" ndjson\n"
    payload = preamble + b"".join(json.dumps(m).encode() + b"\n" for m in (INIT,)) + over + b"\n"
    payload += json.dumps(STATS).encode() + b"\n"
    reader, writer = await asyncio.open_unix_connection(str(path), limit=1 << 20)
    writer.write(payload)
    await writer.drain()
    answers: list[dict] = []
    while len([a for a in answers if "id" in a]) < 3:
        answers.append(json.loads(await asyncio.wait_for(reader.readline(), 60)))
    writer.close()
    found = by_id(answers)
    assert_refused(found[None], LIMIT + 1)
    assert found[3]["result"]["framing"] == "ndjson"
