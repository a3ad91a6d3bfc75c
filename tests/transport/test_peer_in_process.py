"""The one JSON-RPC peer (`tether_protocol.peer`), two ends wired together in memory
through real framing, and what `tether acp` imports on its way to a session.

The daemon, the Python client and the benchmarks all run this peer, so what these tests
pin holds for every end: requests in both directions, cancellation in both spellings,
exactly one answer per request, late replies ignored.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest

from tether_protocol import Framing, dumps, encoder_for
from tether_protocol.peer import (
    JsonRpcPeer,
    MessageReader,
    PeerOptions,
    RequestFailed,
    Route,
)

if TYPE_CHECKING:
    from pathlib import Path


class Pipe:
    """One direction of a connection: frames written here are read by `into`."""

    def __init__(self, framing: Framing) -> None:
        self.encode = encoder_for(framing)
        self.reader = MessageReader()  # detects the framing, as the daemon does
        self.into: JsonRpcPeer | None = None
        self.sent: list[Any] = []

    def send(self, message: Any) -> None:
        self.sent.append(message)
        self.send_body(dumps(message))

    def send_body(self, body: bytes) -> None:
        frame = self.encode(body)
        loop = asyncio.get_running_loop()
        for message in self.reader.feed(frame):
            assert self.into is not None
            loop.call_soon(self.into.handle_message, message)


def wire(a: JsonRpcPeer, b: JsonRpcPeer, framing: Framing = "lsp") -> tuple[Pipe, Pipe]:
    a_to_b, b_to_a = Pipe(framing), Pipe(framing)
    a_to_b.into, b_to_a.into = b, a
    a.attach(a_to_b)
    b.attach(b_to_a)
    return a_to_b, b_to_a


@pytest.mark.parametrize("framing", ["lsp", "ndjson"])
async def test_requests_go_both_ways_and_each_gets_its_answer(framing: Framing) -> None:
    async def add(params: Any) -> Any:
        return params["a"] + params["b"]

    async def ask_back(params: Any) -> Any:
        # the daemon, while answering, asks the client something (as a turn asks approval)
        return {"client said": await daemon.request("client/question", {"q": params["q"]})}

    async def client_answers(method: str, params: Any) -> Any:
        return f"{method}: {params['q']}!"

    daemon = JsonRpcPeer(
        {"add": Route("add", add), "ask": Route("ask", ask_back)}, options=PeerOptions(id_prefix="tether-")
    )
    client = JsonRpcPeer(on_request=client_answers)
    wire(client, daemon, framing)

    assert await client.request("add", {"a": 2, "b": 3}) == 5
    assert await client.request("ask", {"q": "ok"}) == {"client said": "client/question: ok!"}
    assert daemon.running_requests == 0 and client.outgoing_requests == 0


@pytest.mark.parametrize(
    ("style", "method", "key"), [("lsp", "$/cancelRequest", "id"), ("acp", "$/cancel_request", "requestId")]
)
async def test_a_cancelled_request_is_dropped_by_the_other_side_and_its_late_answer_ignored(
    style: Any, method: str, key: str
) -> None:
    started, stopped = asyncio.Event(), asyncio.Event()

    async def slow(params: Any) -> Any:
        started.set()
        try:
            await asyncio.sleep(30)
        finally:
            stopped.set()

    server = JsonRpcPeer({"slow": Route("slow", slow)})
    client = JsonRpcPeer(options=PeerOptions(cancel_style=style))
    to_server, to_client = wire(client, server)

    waiting = asyncio.ensure_future(client.request("slow"))
    await started.wait()
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await asyncio.wait_for(stopped.wait(), 5)  # the server's handler was stopped
    cancel = to_server.sent[-1]
    assert cancel["method"] == method and cancel["params"] == {key: 1}
    for _ in range(10):
        await asyncio.sleep(0)
    # the server still answered exactly once (-32800), and the client ignored it
    answers = [m for m in to_client.sent if m.get("id") == 1]
    assert [a["error"]["code"] for a in answers] == [-32800]
    assert client.unknown_responses == 1


async def test_a_request_cancelled_in_the_chunk_that_brought_it_is_still_answered_once() -> None:
    """Under load a request and its cancel are read together (the daemon withdraws a
    permission request another window answered): the handler never starts, and the request
    still gets its one answer (-32800) and leaves no running request behind."""
    ran: list[str] = []

    async def on_request(method: str, params: Any) -> Any:
        ran.append(method)
        await asyncio.sleep(30)

    answered = Pipe("ndjson")
    window = JsonRpcPeer(on_request=on_request)
    window.attach(answered)
    window.handle_message({"jsonrpc": "2.0", "id": "tether-1", "method": "session/request_permission", "params": {}})
    window.handle_message({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "tether-1"}})
    for _ in range(10):
        await asyncio.sleep(0)
    assert ran == [] and window.running_requests == 0
    assert [(m["id"], m["error"]["code"]) for m in answered.sent] == [("tether-1", -32800)]


async def test_a_request_that_answers_its_own_cancellation_is_not_interrupted() -> None:
    stop = asyncio.Event()

    async def prompt(params: Any) -> Any:
        await stop.wait()
        return {"stopReason": "cancelled"}

    server = JsonRpcPeer({"session/prompt": Route("session/prompt", prompt, on_cancel=lambda _p: stop.set())})
    client = JsonRpcPeer()
    wire(client, server)
    request_id, answer = client.request_future("session/prompt", {})
    await asyncio.sleep(0)
    client.notify("$/cancel_request", {"requestId": request_id})
    assert await asyncio.wait_for(answer, 5) == {"stopReason": "cancelled"}


async def test_errors_reach_the_caller_with_their_code_and_a_bug_only_with_a_log_reference(caplog: Any) -> None:
    async def refuse(params: Any) -> Any:
        raise RequestFailed("refuse", {"code": -32002, "message": "no such session", "data": {"sessionId": "x"}})

    async def bug(params: Any) -> Any:
        raise KeyError("secret detail")

    server = JsonRpcPeer(
        {"refuse": Route("refuse", refuse), "bug": Route("bug", bug)}, options=PeerOptions(log_name="the daemon log")
    )
    client = JsonRpcPeer()
    wire(client, server)

    with pytest.raises(RequestFailed) as refused:
        await client.request("refuse")
    assert (refused.value.code, refused.value.message, refused.value.data) == (
        -32002,
        "no such session",
        {"sessionId": "x"},
    )
    with pytest.raises(RequestFailed) as failed:
        await client.request("bug")
    assert failed.value.code == -32603
    assert "secret detail" not in failed.value.message and "daemon log" in failed.value.message
    assert "secret detail" in caplog.text  # the traceback went to the log
    with pytest.raises(RequestFailed) as missing:
        await client.request("nope")
    assert (missing.value.code, missing.value.message) == (-32601, "method not found: nope")


async def test_only_the_top_level_is_classified_so_nested_jsonrpc_objects_are_data() -> None:
    seen: list[Any] = []

    async def echo(params: Any) -> Any:
        seen.append(params)
        return params

    server = JsonRpcPeer({"echo": Route("echo", echo)})
    client = JsonRpcPeer()
    wire(client, server)
    nested = {"jsonrpc": "2.0", "id": 99, "result": "not a response"}
    assert await client.request("echo", {"payload": nested}) == {"payload": nested}
    assert server.unknown_responses == 0 and seen == [{"payload": nested}]


async def test_a_closed_connection_fails_every_waiting_request_with_its_method() -> None:
    server = JsonRpcPeer()
    client = JsonRpcPeer()
    wire(client, server)
    _id, answer = client.request_future("session/prompt")
    client.connection_lost("the daemon")
    with pytest.raises(ConnectionError, match="session/prompt: the daemon closed the connection"):
        await answer


def test_tether_acp_reaches_a_session_without_pygls_or_lsprotocol(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    lines = [
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}',
        '{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"%s","mcpServers":[]}}' % ws,  # noqa: UP031 (JSON text: its braces stay single)
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env["TETHER_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tether", "acp", "--provider", "scripted", "--workspace", str(ws)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert '"id":2,"result":{"sessionId"' in done.stdout.replace(" ", ""), done.stdout + done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "tether.server.app" in imported  # the check sees the daemon's imports
    assert not {m for m in imported if m.split(".")[0] in ("pygls", "lsprotocol")}


async def test_closing_our_end_fails_every_waiting_request_as_a_lost_connection_does() -> None:
    """`cancel_all` (our side closes) once cancelled our requests' futures: whoever awaited one
    got a bare CancelledError it could not tell from its own cancellation. Both ends of a
    connection now fail a request whose answer can never come one way: ConnectionError."""
    server = JsonRpcPeer()
    client = JsonRpcPeer()
    wire(client, server)
    waiting = asyncio.ensure_future(client.request("session/request_permission"))
    await asyncio.sleep(0)
    client.cancel_all()
    with pytest.raises(ConnectionError, match="session/request_permission: the connection is closing"):
        await waiting
    assert client.outgoing_requests == 0


async def test_a_request_of_ours_the_other_side_takes_back_fails_as_cancelled() -> None:
    """ACP's `$/cancel_request` goes both ways: a client may take back a request the daemon
    sent it (`tether-N`), which it then never answers. Waiting for it would hang; it fails
    -32800. A bare number is not read so (it may be a late cancel of the other side's own
    request of that number): a peer without an id prefix keeps waiting."""
    daemon = JsonRpcPeer(options=PeerOptions(id_prefix="tether-"))
    plain = JsonRpcPeer()
    wire(daemon, plain)
    request_id, asked = daemon.request_future("session/request_permission")
    daemon.handle_message({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": request_id}})
    with pytest.raises(RequestFailed) as taken_back:
        await asked
    assert taken_back.value.code == -32800
    assert str(taken_back.value) == (
        "session/request_permission: cancelled by the other side without an answer (code -32800)"
    )
    number, waiting = plain.request_future("session/prompt")
    plain.handle_message({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": number}})
    await asyncio.sleep(0)
    assert not waiting.done() and plain.outgoing_requests == 1
