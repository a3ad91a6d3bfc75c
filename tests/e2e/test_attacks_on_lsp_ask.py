"""A hostile LSP client against the size cap (`max_message_mib`, SPEC §3.12, §3.33): `tether.ask`
builds its prompt from more than its own text — the diagnostics of a fix, the selected lines of
a document — so the cap holds for the prompt it builds. Over it (the user's cap at 1 MiB), the
ask is refused `-32602` before a session or a turn, and the client can ask again."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tether_client import ClientError

SCRIPT = Path(__file__).resolve().parent.parent / "lsp_editors" / "lsp-agent.json"
MIB = 1 << 20


@pytest.fixture
def one_mib_cap(tmp_path: Path) -> None:
    config = tmp_path / "xdg-config" / "tether" / "config.toml"  # XDG_CONFIG_HOME of daemon_env
    config.parent.mkdir(parents=True)
    config.write_text("max_message_mib = 1\n")


async def _editor(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon(script=SCRIPT, initialize=False)

    async def on_request(method: str, params: dict):
        return {"success": True} if method == "window/showDocument" else None

    daemon.client.peer.on_request = on_request
    await daemon.client.request(
        "initialize",
        {
            "processId": None,
            "rootUri": workspace.as_uri(),
            "capabilities": {"window": {"showMessage": {}, "workDoneProgress": True}},
        },
    )
    daemon.client.peer.notify("initialized", {})
    return daemon.client


async def _refused(client, ask: dict) -> str:
    with pytest.raises(ClientError) as refused:
        await client.request("workspace/executeCommand", {"command": "tether.ask", "arguments": [ask]})
    assert refused.value.code == -32602, refused.value.message[:300]
    assert "invalid params for tether.ask: prompt holds" in refused.value.message
    assert "over the limit of 1 MiB per message" in refused.value.message
    return refused.value.message


@pytest.mark.usefixtures("one_mib_cap")
async def test_the_prompt_an_ask_builds_is_held_to_the_cap(spawn_daemon, workspace: Path) -> None:
    client = await _editor(spawn_daemon, workspace)
    readme = (workspace / "README.md").as_uri()
    line = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    # a fix whose diagnostics hold 3 MiB of messages
    diagnostics = [{"range": line, "message": "d" * MIB, "severity": 1} for _ in range(3)]
    await _refused(client, {"kind": "fix", "uri": readme, "range": line, "diagnostics": diagnostics})
    # an explain of one selected line of 3 MiB, in a document the editor opened
    huge = workspace / "one-line.js"
    client.peer.notify(
        "textDocument/didOpen",
        {
            "textDocument": {
                "uri": huge.as_uri(),
                "languageId": "javascript",
                "version": 1,
                "text": "x" * (3 * MIB) + "\n",
            }
        },
    )
    await _refused(client, {"kind": "explain", "uri": huge.as_uri(), "range": line})
    assert not (await client.request("session/list", {"cwd": str(workspace)}))["sessions"]  # nothing stored
    # and the editor asks again, within the cap
    started = await client.request("workspace/executeCommand", {"command": "tether.ask", "arguments": ["slow please"]})
    assert set(started) == {"sessionId", "turnId"}


async def _ask_refused(client, ask: dict) -> str:
    with pytest.raises(ClientError) as refused:
        await asyncio.wait_for(
            client.request("workspace/executeCommand", {"command": "tether.ask", "arguments": [ask]}), 20
        )
    assert refused.value.code == -32602, refused.value.message[:300]
    return refused.value.message


@pytest.mark.usefixtures("one_mib_cap")
async def test_an_ask_on_a_file_not_opened_reads_only_inside_the_workspace_and_within_the_cap(
    spawn_daemon, workspace: Path
) -> None:
    """`tether.ask` with the uri of a file the editor never opened: Tether reads it from disk.
    A file outside the workspace (directly or through a link in it), one over the cap (read
    whole before, however large) and a planted FIFO (whose read waited for a writer) are
    refused, naming the file, before a session or a turn."""
    client = await _editor(spawn_daemon, workspace)
    line = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    outside = workspace.parent / "outside.txt"  # "secret outside the workspace"
    (workspace / "link.txt").symlink_to(outside)
    for uri in (outside.as_uri(), (workspace / "link.txt").as_uri()):
        message = await _ask_refused(client, {"kind": "explain", "uri": uri, "range": line})
        shown = uri.removeprefix("file://")
        assert message == (
            f"invalid params for tether.ask: {shown} is outside the workspace {workspace}; "
            f"open it in the editor or send the prompt as text"
        )
    big = workspace / "big.log"
    big.write_text("short line\n" * (3 * MIB // 11))  # the selection is small: the file is not
    message = await _ask_refused(client, {"kind": "explain", "uri": big.as_uri(), "range": line})
    assert message.startswith(f"invalid params for tether.ask: {big} is over the limit of 1 MiB per message")
    fifo = workspace / "pipe.txt"
    os.mkfifo(fifo)
    message = await _ask_refused(client, {"kind": "explain", "uri": fifo.as_uri(), "range": line})
    assert message.startswith(f"invalid params for tether.ask: {fifo} cannot be read (not a regular file)")
    assert not (await client.request("session/list", {"cwd": str(workspace)}))["sessions"]  # nothing stored
    # a file inside the workspace, within the cap, is still read
    started = await client.request(
        "workspace/executeCommand",
        {"command": "tether.ask", "arguments": [{"kind": "explain", "uri": (workspace / "README.md").as_uri()}]},
    )
    assert set(started) == {"sessionId", "turnId"}
