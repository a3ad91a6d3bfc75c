"""A stock LSP client's turn (`tether.ask`, SPEC §3.33) in the shared daemon is shown live to
a window that has its session open, and the window is told when it ends."""

from __future__ import annotations

import sys
from pathlib import Path

from daemon_harness import until

SCRIPT = Path(__file__).resolve().parents[1] / "lsp_editors" / "lsp-agent.json"
CAPABILITIES = {"window": {"showMessage": {}, "workDoneProgress": True}}


async def _lsp_editor(windows, workspace: Path):
    """A stock LSP client through `tether serve --shared` (LSP framing, no ACP)."""
    from tether_client import TetherClient

    async def on_request(method: str, params: dict):
        return None  # window/workDoneProgress/create

    err = open(windows.tmp / "lsp-editor.stderr", "wb")  # noqa: SIM115 (a child's stderr: open as long as the child runs)
    client = await TetherClient.spawn(
        command=[
            sys.executable,
            "-m",
            "tether",
            "serve",
            "--shared",
            "--provider",
            "scripted",
            "--script",
            str(SCRIPT),
        ],
        env=windows.env,
        cwd=workspace,
        stderr=err,
        framing="lsp",
        on_request=on_request,
    )
    err.close()
    windows.clients.append(client)
    await client.request("initialize", {"processId": None, "rootUri": workspace.as_uri(), "capabilities": CAPABILITIES})
    client.peer.notify("initialized", {})
    return client


def _shown(client) -> list[dict]:
    return [p for m, p in client.notifications if m == "window/showMessage"]


async def test_a_window_watching_the_lsp_clients_session_sees_its_turn(windows, workspace: Path):
    editor = await _lsp_editor(windows, workspace)
    first = await editor.request(
        "workspace/executeCommand", {"command": "tether.ask", "arguments": ["What does this do?"]}
    )
    await until(lambda: len(_shown(editor)) == 1)

    window = await windows.open(script=SCRIPT)
    watching = await window.load_session(first["sessionId"], workspace)
    assert len(windows.daemon_pids()) == 1
    replayed = len(watching.updates)
    second = await editor.request(
        "workspace/executeCommand", {"command": "tether.ask", "arguments": ["What does this do?"]}
    )
    assert second["sessionId"] == first["sessionId"]
    await until(lambda: len(_shown(editor)) == 2)  # the LSP client's own view is unchanged
    assert "It returns 42." in _shown(editor)[1]["message"]

    def ended() -> list[dict]:
        return [u for u in watching.updates[replayed:] if "turnEnded" in (u.get("_meta") or {}).get("tether", {})]

    await until(lambda: ended())
    live = watching.updates[replayed:]
    text = "".join(u["content"]["text"] for u in live if u["sessionUpdate"] == "agent_message_chunk")
    assert text == "It returns 42."
    assert live[-1] is ended()[0]
    assert ended()[0]["_meta"]["tether"]["turnEnded"] == {"turnId": second["turnId"], "stopReason": "end_turn"}
    # the LSP client got no ACP notification
    assert not [m for m, _ in editor.notifications if m == "session/update"]
