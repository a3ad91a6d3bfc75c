"""A fake model server for the benchmarks: pre-encoded SSE replies on 127.0.0.1 only.

    python bench/fake_model.py --deltas N [--max-requests M] [--mode bulk|per-event]   (its own process)
                                [--pace-us U] [--tls CERT KEY]

Owns: answering every model request with a pre-encoded stream of N deltas of 4
characters each, written as fast as the socket takes it (`bulk`: 64 KiB writes;
`per-event`: one SSE event per `send`, with TCP_NODELAY, as real servers write,
optionally paced `--pace-us` apart as a model's tokens are; `--tls`: over TLS with that
certificate, bulk only), in OpenAI chat-completion
chunks (`/v1/chat/completions`, what Tether's openai provider speaks), Anthropic Messages
events (`/v1/messages`) or OpenAI Responses events (`/v1/responses`, what Codex speaks);
a line of JSON per request on stdout (path, CLOCK_MONOTONIC times, sizes); and
`FakeModel`, the handle a benchmark starts it with. Must not: reach anything but
127.0.0.1, or live unbounded (it exits after `--max-requests` requests or
`IDLE_EXIT_S` without one).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from typing import Any

IDLE_EXIT_S = 120.0
# for a process that would reach out (Codex): every host but 127.0.0.1 goes to a proxy port where nothing listens
OFFLINE_ENV = {
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "HTTP_PROXY": "http://127.0.0.1:9",
    "ALL_PROXY": "http://127.0.0.1:9",
    "https_proxy": "http://127.0.0.1:9",
    "http_proxy": "http://127.0.0.1:9",
    "all_proxy": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
}


def now() -> float:
    """CLOCK_MONOTONIC, system-wide on Linux: comparable between the bench's processes."""
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def _sse(data: dict[str, Any], event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n"


def openai_stream(deltas: int) -> bytes:
    head = '{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1750000000,"model":"bench","choices":['
    parts = [f'data: {head}{{"index":0,"delta":{{"role":"assistant","content":""}},"finish_reason":null}}]}}\n\n']
    one = f'data: {head}{{"index":0,"delta":{{"content":"abcd"}},"finish_reason":null}}]}}\n\n'
    parts.append(one * deltas)
    parts.append(f'data: {head}{{"index":0,"delta":{{}},"finish_reason":"stop"}}]}}\n\n')
    usage = f'"usage":{{"prompt_tokens":900,"completion_tokens":{deltas},"total_tokens":{900 + deltas}}}'
    parts.append(f"data: {head}],{usage}}}\n\n")
    parts.append("data: [DONE]\n\n")
    return "".join(parts).encode()


def anthropic_stream(deltas: int) -> bytes:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_bench",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": "bench",
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 900, "output_tokens": 1},
        },
    }
    one = _sse(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "abcd"}},
        "content_block_delta",
    )
    stop = {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": deltas},
    }
    return "".join(
        [
            _sse(start, "message_start"),
            _sse(
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                "content_block_start",
            ),
            _sse({"type": "ping"}, "ping"),
            one * deltas,
            _sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
            _sse(stop, "message_delta"),
            _sse({"type": "message_stop"}, "message_stop"),
        ]
    ).encode()


def responses_stream(deltas: int) -> bytes:
    """The OpenAI Responses API's events (what Codex speaks): one message item, N deltas."""
    item = {"type": "message", "role": "assistant", "id": "msg_bench", "status": "in_progress", "content": []}
    one = _sse(
        {
            "type": "response.output_text.delta",
            "item_id": "msg_bench",
            "output_index": 0,
            "content_index": 0,
            "delta": "abcd",
        },
        "response.output_text.delta",
    )
    text = {"type": "output_text", "text": "abcd" * deltas, "annotations": []}
    done = {**item, "status": "completed", "content": [text]}
    usage = {
        "input_tokens": 900,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": deltas,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 900 + deltas,
    }
    created = {"type": "response.created", "response": {"id": "resp_bench", "status": "in_progress"}}
    completed = {"type": "response.completed", "response": {"id": "resp_bench", "status": "completed", "usage": usage}}
    return "".join(
        [
            _sse(created, "response.created"),
            _sse({"type": "response.output_item.added", "output_index": 0, "item": item}, "response.output_item.added"),
            one * deltas,
            _sse({"type": "response.output_item.done", "output_index": 0, "item": done}, "response.output_item.done"),
            _sse(completed, "response.completed"),
        ]
    ).encode()


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, int]:
    """(path, body bytes) of one HTTP/1.1 request; the body is read and dropped."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    path = lines[0].split(" ")[1]
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    await reader.readexactly(length)
    return path, length


def _send_events(sock: socket.socket, events: list[bytes], pace_s: float) -> None:
    """One `sendall` per event: with TCP_NODELAY, a segment each unless the receiver is
    behind (then the kernel's buffer holds several, as it would). `pace_s`: at least that
    long from one event to the next (a spin, not a sleep: a sleep's wake-up is too coarse)."""
    if not pace_s:
        for event in events:
            sock.sendall(event)
        return
    clock = time.perf_counter
    due = clock()
    for event in events:
        while clock() < due:
            pass
        sock.sendall(event)
        due += pace_s


async def _write_events(writer: asyncio.StreamWriter, events: list[bytes], pace_s: float) -> None:
    await writer.drain()  # the head goes first, through the transport
    transport_sock = writer.get_extra_info("socket")
    # a duplicate of the connection's socket, written from a thread, so that nothing in
    # asyncio's transport can merge two events into one write; a timeout (not blocking
    # mode, which the two descriptors would share) makes `sendall` wait for room
    sock = socket.socket(fileno=os.dup(transport_sock.fileno()))
    try:
        sock.settimeout(60.0)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await asyncio.to_thread(_send_events, sock, events, pace_s)
    finally:
        sock.close()


def split_events(body: bytes) -> list[bytes]:
    """The stream's events, each with its blank line (no event of ours holds one inside)."""
    return [frame + b"\n\n" for frame in body.split(b"\n\n")[:-1]]


async def _write_reply(
    writer: asyncio.StreamWriter, body: bytes | None, events: list[bytes] | None, pace_s: float = 0.0
) -> None:
    if body is None:
        writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
    else:
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"cache-control: no-cache\r\nconnection: close\r\n\r\n"
        )
        if events is not None:
            await _write_events(writer, events, pace_s)
            return
        view = memoryview(body)
        for i in range(0, len(body), 1 << 16):
            writer.write(view[i : i + (1 << 16)])
            await writer.drain()
    await writer.drain()


async def serve(
    deltas: int, max_requests: int, mode: str = "bulk", pace_us: float = 0.0, tls: list[str] | None = None
) -> None:
    bodies = {
        "/v1/chat/completions": openai_stream(deltas),
        "/v1/messages": anthropic_stream(deltas),
        "/v1/responses": responses_stream(deltas),
    }
    per_event = {path: split_events(body) for path, body in bodies.items()} if mode == "per-event" else {}
    served = 0
    last = now()
    done = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal served, last
        accepted = now()
        try:
            path, length = await _read_request(reader)
            arrived = now()
            body = bodies.get(path)
            await _write_reply(writer, body, per_event.get(path), pace_us / 1e6)
            print(
                json.dumps(
                    {
                        "path": path,
                        "accepted": accepted,
                        "arrived": arrived,
                        "sent": now(),
                        "request_bytes": length,
                        "reply_bytes": len(body or b""),
                    }
                ),
                flush=True,
            )
        except (ConnectionError, asyncio.IncompleteReadError, ValueError, IndexError):
            pass
        finally:
            writer.close()
            served += 1
            last = now()
            if served >= max_requests:
                done.set()

    context = None
    if tls:
        import ssl

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=context)
    print(json.dumps({"port": server.sockets[0].getsockname()[1]}), flush=True)
    async with server:
        while not done.is_set() and now() - last < IDLE_EXIT_S:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), 1.0)


class FakeModel:
    """The server in its own process; `requests` receives one dict per request it answered."""

    def __init__(
        self,
        deltas: int,
        max_requests: int = 64,
        mode: str = "bulk",
        pace_us: float = 0.0,
        tls: tuple[str, str] | None = None,
    ) -> None:
        argv = [
            sys.executable,
            __file__,
            "--deltas",
            str(deltas),
            "--max-requests",
            str(max_requests),
            "--mode",
            mode,
            "--pace-us",
            str(pace_us),
            *(["--tls", *tls] if tls else []),
        ]
        self.scheme = "https" if tls else "http"
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.port: int = json.loads(self.proc.stdout.readline())["port"]
        self.requests: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.requests.put(json.loads(line))

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def next_request(self, timeout: float = 30.0) -> dict[str, Any]:
        return self.requests.get(timeout=timeout)

    def drain(self) -> list[dict[str, Any]]:
        seen: list[dict[str, Any]] = []
        while True:
            try:
                seen.append(self.requests.get_nowait())
            except queue.Empty:
                return seen

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        self._reader.join(5)  # it reads to the pipe's end, then the pipe can close
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deltas", type=int, required=True)
    parser.add_argument("--max-requests", type=int, default=64)
    parser.add_argument("--mode", choices=("bulk", "per-event"), default="bulk")
    parser.add_argument(
        "--pace-us", type=float, default=0.0, help="per-event mode: at least this many µs between two events' writes"
    )
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), help="serve over TLS (bulk mode)")
    args = parser.parse_args()
    asyncio.run(serve(args.deltas, args.max_requests, args.mode, args.pace_us, args.tls))


if __name__ == "__main__":
    main()
