"""A real daemon streams a long answer from a server that writes one SSE event per send.

The model server is bench/fake_model.py in `per-event` mode (its own process, 127.0.0.1,
TCP_NODELAY, one `send` per event: how OpenAI, Anthropic, vLLM or llama.cpp write), run
as fast as it can and paced as a model's tokens come. The client must see every
character of the answer in order, and the turn end normally, through `tether serve
--provider openai|anthropic` (the HTTP read loop, the adapters, the sanitiser and the
update emitter of the installed daemon).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from daemon_harness import text_of

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from fake_model import FakeModel

KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize(("deltas", "pace_us"), [(4000, 0.0), (400, 300.0)])
async def test_every_character_of_a_one_event_per_write_stream_reaches_the_client(
    spawn_daemon, workspace: Path, kind: str, deltas: int, pace_us: float
) -> None:
    server = FakeModel(deltas, max_requests=4, mode="per-event", pace_us=pace_us)
    try:
        base = server.url + ("/v1" if kind == "openai" else "")
        command = [
            sys.executable,
            "-m",
            "tether",
            "serve",
            "--provider",
            kind,
            "--base-url",
            base,
            "--model",
            "m",
            "--max-retries",
            "0",
        ]
        daemon = await spawn_daemon(command=command, env={KEY_ENV[kind]: "sk-e2e-fake"})
        session = await daemon.client.new_session(workspace)
        turn = session.prompt("stream a lot")
        updates = [u async for u in turn]
        answered = [server.next_request(timeout=10.0)]
        while answered[-1]["path"] != PATHS[kind]:  # the daemon also lists the models
            answered.append(server.next_request(timeout=10.0))
    finally:
        server.close()
    assert turn.stop_reason == "end_turn"
    assert text_of(updates) == "abcd" * deltas
    assert answered[-1]["reply_bytes"] > 100 * deltas  # the long reply was the one served
