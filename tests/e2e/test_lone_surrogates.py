"""A lone UTF-16 surrogate from a client (JavaScript's JSON.stringify writes a broken pair
as one, `"\\ud83d"`) is read as U+FFFD: prompts, searches and restores that carry one work.
The requests are sent as raw JSON text: the Python client would not write such a string."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tether_protocol import encode_lsp


async def _raw_request(daemon, msg_id: int, method: str, params_json: str) -> dict:
    """Send a request whose params are the JSON text given; its answer."""
    peer = daemon.client.peer
    body = '{"jsonrpc":"2.0","id":%d,"method":"%s","params":%s}' % (msg_id, method, params_json)
    peer.send_raw(encode_lsp(body.encode()))
    async with asyncio.timeout(15):
        while True:
            for message in peer.received:
                if message.get("id") == msg_id and "method" not in message:
                    peer.received.remove(message)
                    return message
            await asyncio.sleep(0.01)


async def test_a_prompt_search_and_restore_with_a_lone_surrogate(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon()
    session = await daemon.client.new_session(workspace)
    answer = await _raw_request(daemon, 9001, "session/prompt", json.dumps(
        {"sessionId": session.id, "prompt": [{"type": "text", "text": "hi \ud83d there"}]}))
    assert answer.get("result", {}).get("stopReason") == "end_turn", answer

    snapshot = await daemon.client.request("_tether/session/dump", {"sessionId": session.id})
    first = snapshot["messages"][0]["body"]["content"][0]["text"]
    assert first == "hi \ufffd there" and snapshot["session"]["title"] == "hi \ufffd there"

    found = await _raw_request(daemon, 9002, "_tether/session/search", '{"query": "there \\ud800"}')
    assert [hit["sessionId"] for hit in found["result"]["hits"]] == [session.id], found

    snapshot["session"]["title"] = "broken \ud800 title"
    snapshot["messages"][1]["body"]["thinking"] = "half a pair \udc00"
    restored = await _raw_request(daemon, 9003, "_tether/session/restore", json.dumps({"snapshot": snapshot}))
    new_id = restored["result"]["sessionId"]
    copy = await daemon.client.request("_tether/session/dump", {"sessionId": new_id})
    assert copy["session"]["title"] == "broken \ufffd title"
    assert copy["messages"][1]["body"]["thinking"] == "half a pair \ufffd"

    other = await spawn_daemon()  # replayed from the store
    loaded = await other.client.load_session(session.id, workspace)
    assert loaded.updates[0]["content"]["text"] == "hi \ufffd there"
