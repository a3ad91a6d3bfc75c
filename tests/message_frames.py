"""Messages at, and over, the daemon's limit on one JSON-RPC message (SPEC §1.2), and how
the tests read the answers to them."""

from __future__ import annotations

import json

LIMIT = 64 << 20  # the default `max_message_mib` (8) gives 6 x 8 + 1 = 49 MiB: the 64 MiB floor
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
STATS = {"jsonrpc": "2.0", "id": 3, "method": "_tether/daemon/stats", "params": {}}


def padded(message: dict, size: int) -> bytes:
    """``message`` as JSON, padded with trailing whitespace (still valid JSON) to ``size`` bytes."""
    body = json.dumps(message).encode()
    return body + b" " * (size - len(body))


def lsp(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def lsp_bodies(out: bytes) -> list[dict]:
    found = []
    while out:
        header, _, rest = out.partition(b"\r\n\r\n")
        length = int(header.split(b":")[1])
        found.append(json.loads(rest[:length]))
        out = rest[length:]
    return found


def by_id(answers: list[dict]) -> dict:
    """The answers by id: each request answered once, the refused message as `id: null`
    (requests run concurrently, so answers come in any order)."""
    found = {a["id"]: a for a in answers if "id" in a}
    assert sorted(found, key=str) == sorted([1, None, 3], key=str), answers
    return found


def assert_refused(answer: dict, size: int) -> None:
    assert answer["id"] is None
    assert answer["error"]["code"] == -32600
    text = answer["error"]["message"]
    assert f"{size:,} bytes" in text and f"{LIMIT:,} bytes" in text, text
    assert "max_message_mib" in text and "path" in text, text


