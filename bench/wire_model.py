"""The wire model's hot and bulk paths in-process (issue 32 item 1; figures go to
bench/RESULTS.md, "Issue 32: the wire model on msgspec").

    .venv/bin/python bench/wire_model.py [--messages 50000] [--rounds 7]
    <other tree>/.venv/bin/python bench/wire_model.py     (the same script, that tree's code)

1. 20,000 `agent_message_chunk` frames: the renderer's `chunk` and `emitter.frame`, as a
   flush writes them (one frame per flush; a delta per frame is the worst case).
2. 2,000 tool call frames (`ToolCallStarted`, then a patch with content and locations).
3. The replay of N stored messages (user, assistant with thinking, text and a call, the
   call's result; every 7th turn cancelled): `replay_frames` (what `session/load` sends)
   and `replay_updates` (the same as JSON objects); `replay_queued`: the frames as
   `session/load` queues them on the connection (UTF-8, LSP framing: a tree whose replay
   yields text pays its encoding there).
Each figure is the median CPU time (`time.process_time`) of the rounds, in ms. Nothing is
asserted; the outputs are checked against each other by the tests, not here.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from tether.agent.sink import TextContent as ToolText
from tether.agent.sink import ToolCallPatch, ToolCallStarted
from tether.rendering import replay_frames, replay_updates
from tether.rendering.acp_v1 import V1
from tether.rendering.emitter import frame
from tether.tools.base import ToolLocation
from tether_protocol import encoder_for


def history(messages: int) -> list[tuple[dict[str, Any], str]]:
    out: list[tuple[dict[str, Any], str]] = []
    turn = 0
    while len(out) < messages:
        status = "cancelled" if turn % 7 == 6 else "complete"
        call = {"id": f"call_{turn}", "name": "read_file", "arguments": {"path": f"src/m{turn}.py", "limit": 1.5e16}}
        out += [
            ({"role": "user", "content": [{"type": "text", "text": f"Look at part {turn}, é\n"}]}, "complete"),
            ({"role": "assistant", "thinking": "Reading it first.", "text": "Let me read it.", "tool_calls": [call]},
             status),
            ({"role": "tool", "tool_call_id": call["id"], "name": "read_file", "content": "x = 1\n" * 20,
              "title": f"Read src/m{turn}.py", "kind": "read", "locations": [{"path": f"/w/src/m{turn}.py"}]},
             "complete"),
            ({"role": "assistant", "text": f"Part {turn} is fine."}, status),
        ]
        turn += 1
    return out[:messages]


def chunks() -> None:
    for i in range(20_000):
        frame("sess_1", V1.chunk("text", "abcd"))


def calls() -> None:
    content = (ToolText("x = 1\n" * 20),)
    where = (ToolLocation("/w/a.py", 3),)
    for i in range(1_000):
        event = V1.event(ToolCallStarted(f"c{i}", "Read a.py", "read"))
        assert event is not None
        frame("sess_1", event)
        patch = V1.event(ToolCallPatch(f"c{i}", "completed", raw_input={"path": "a.py"}, content=content, locations=where))
        assert patch is not None
        frame("sess_1", patch)


def queued(stored: list[tuple[dict[str, Any], str]]) -> list[bytes]:
    framed = encoder_for("lsp")
    return [framed(body if type(body) is bytes else body.encode("utf-8", "replace")) for body in replay_frames("sess_1", stored)]


def median_ms(run: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.process_time()
        run()
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    stored = history(args.messages)
    figures = {
        "chunk_frames_20k": median_ms(chunks, args.rounds),
        "tool_call_frames_2k": median_ms(calls, args.rounds),
        f"replay_frames_{args.messages}": median_ms(lambda: list(replay_frames("sess_1", stored)), args.rounds),
        f"replay_queued_{args.messages}": median_ms(lambda: queued(stored), args.rounds),
        f"replay_updates_{args.messages}": median_ms(lambda: replay_updates(stored), args.rounds),
    }
    for name, ms in figures.items():
        print(f"{name:28} {ms:8.1f} ms")


if __name__ == "__main__":
    main()
