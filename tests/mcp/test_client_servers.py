"""Servers an ACP client passes in `session/new`: the reference server-everything over stdio
and streamable HTTP, with approvals; the handshake's `mcpCapabilities`; bad entries."""

from __future__ import annotations

import asyncio
import os
import subprocess
from typing import TYPE_CHECKING

import pytest
from mcp_harness import SCRIPT, User, final, free_port, new_session, programs, run, text

from daemon_harness import host_pids, until
from tether_client import ClientError

if TYPE_CHECKING:
    from pathlib import Path


async def test_initialize_advertises_http_and_sse_servers(spawn_daemon):
    daemon = await spawn_daemon(script=SCRIPT, initialize=False)
    answer = await daemon.client.initialize()
    capabilities = answer.get("agentCapabilities") or answer["capabilities"]
    assert capabilities["mcpCapabilities"] == {"http": True, "sse": True}


async def test_server_everything_over_stdio_gives_a_turn_its_tools(spawn_daemon, workspace, everything: Path):
    user = User("reject_once")
    daemon = await spawn_daemon(script=SCRIPT)
    daemon.client.peer.on_request = user.on_request
    servers = [{"name": "everything", "command": "node", "args": [str(everything), "stdio"], "env": []}]
    session = await new_session(daemon, workspace, servers)
    turn, updates = await run(session, "everything at once")
    assert turn.stop_reason == "end_turn"
    assert "The sum of 2 and 3 is 5" in text(final(updates, "call_sum"))
    image = final(updates, "call_image")
    blocks = [b["content"] for b in image["content"] if b["content"]["type"] == "image"]
    assert blocks and blocks[0]["mimeType"] == "image/png" and len(blocks[0]["data"]) > 100
    links = [b["content"] for b in final(updates, "call_links")["content"] if b["content"]["type"] == "resource_link"]
    assert len(links) == 2 and all(link["uri"] and link["name"] for link in links)
    # the three reads ran unasked; the tool without readOnlyHint asked, and was rejected
    (prompt,) = user.prompts
    assert prompt["toolCall"]["title"].startswith("everything: ")
    assert "toggle-simulated-logging" in prompt["toolCall"]["content"][0]["content"]["text"]
    toggled = final(updates, "call_toggle")
    assert toggled["status"] == "failed" and "the user rejected calling MCP tool" in text(toggled)


async def test_an_mcp_image_is_shown_again_when_the_session_is_loaded_in_a_new_daemon(
    spawn_daemon, workspace, everything: Path
):
    daemon = await spawn_daemon(script=SCRIPT)
    daemon.client.peer.on_request = User("reject_once").on_request
    servers = [{"name": "everything", "command": "node", "args": [str(everything), "stdio"], "env": []}]
    session = await new_session(daemon, workspace, servers)
    turn, updates = await run(session, "everything at once")
    assert turn.stop_reason == "end_turn"
    await daemon.client.close()

    other = await spawn_daemon(script=SCRIPT)
    loaded = await other.client.load_session(session.id, workspace)
    replayed = {u["toolCallId"]: u for u in loaded.replay if u["sessionUpdate"] == "tool_call"}
    for call_id in ("call_sum", "call_image", "call_links"):
        live = final(updates, call_id)
        assert replayed[call_id]["status"] == live["status"] == "completed"
        assert replayed[call_id]["content"] == live["content"], call_id  # the text and every block, as shown live
    (image,) = [c["content"] for c in replayed["call_image"]["content"] if c["content"]["type"] == "image"]
    assert image["mimeType"] == "image/png" and len(image["data"]) > 100
    assert [c["content"]["type"] for c in replayed["call_links"]["content"]] == [
        "text",
        "resource_link",
        "resource_link",
    ]


@pytest.fixture(params=[("streamableHttp", "http", "/mcp"), ("sse", "sse", "/sse")], ids=["streamable-http", "sse"])
def http_everything(request, everything: Path, tmp_path: Path):
    """server-everything serving one HTTP transport on a free local port: (type, url)."""
    mode, kind, path = request.param
    port = free_port()
    log = open(tmp_path / "everything-http.log", "wb")  # noqa: SIM115 (a child's stderr: open as long as the child runs)
    process = subprocess.Popen(
        ["node", str(everything), mode],
        env={**os.environ, "PORT": str(port)},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    yield kind, f"http://127.0.0.1:{port}{path}", port
    process.terminate()
    process.wait(10)
    log.close()


async def test_server_everything_over_http_transports(spawn_daemon, workspace, http_everything):
    kind, url, port = http_everything
    for _ in range(600):
        try:
            _reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            break
        except OSError:
            await asyncio.sleep(0.05)
    daemon = await spawn_daemon(script=SCRIPT)
    servers = [{"type": kind, "name": "web", "url": url, "headers": [{"name": "X-Test", "value": "1"}]}]
    session = await new_session(daemon, workspace, servers)
    turn, updates = await run(session, "echo it")
    assert turn.stop_reason == "end_turn"
    done = final(updates, "call_echo")
    assert done["status"] == "completed" and "Echo: over streamable HTTP" in text(done)


async def test_closing_the_session_stops_its_servers(spawn_daemon, workspace, everything: Path, tmp_path: Path):
    token = f"tether-mcp-close-{tmp_path.name}"
    daemon = await spawn_daemon(script=SCRIPT)
    servers = [{"name": "everything", "command": "node", "args": [str(everything), "stdio", token], "env": []}]
    session = await new_session(daemon, workspace, servers)
    await run(session, "everything at once")
    # one server: one node process (inside its bubblewrap sandbox, whose processes name the token too)
    assert programs(host_pids(token)).count("node") == 1
    await session.close()
    await until(lambda: host_pids(token) == [], timeout=30)


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ({"name": "x"}, "params.mcpServers[0].command must be a non-empty string"),
        ({"name": "bad name!", "command": "node"}, "params.mcpServers[0].name must be a server name"),
        ({"type": "ws", "name": "x", "url": "ws://h"}, 'params.mcpServers[0].type must be "http", "sse"'),
        ({"type": "http", "name": "x", "url": "ftp://h", "headers": []}, "params.mcpServers[0].url must be an http"),
        (
            {"name": "x", "command": "node", "env": {"A": "1"}},
            "params.mcpServers[0].env must be a list of {name, value}",
        ),
    ],
)
async def test_a_bad_server_entry_is_invalid_params_naming_it(spawn_daemon, workspace, entry, says):
    daemon = await spawn_daemon(script=SCRIPT)
    with pytest.raises(ClientError) as caught:
        await new_session(daemon, workspace, [entry])
    assert caught.value.code == -32602 and says in caught.value.message
