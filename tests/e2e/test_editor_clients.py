"""Any editor gets the prompts, the edits and the buffers: ACP fs/*, stock LSP clients."""

from __future__ import annotations

from typing import TYPE_CHECKING

from daemon_harness import EXAMPLES

if TYPE_CHECKING:
    from pathlib import Path

SCRIPT = EXAMPLES / "approvals.json"


async def lsp_daemon(spawn_daemon, workspace: Path, capabilities: dict, *extra: str):
    """A daemon initialized the way a stock LSP client does it (no ACP fields)."""
    daemon = await spawn_daemon(*extra, script=SCRIPT, initialize=False)
    await daemon.client.request(
        "initialize", {"processId": None, "rootUri": workspace.as_uri(), "capabilities": capabilities}
    )
    daemon.client.peer.notify("initialized", {})
    return daemon


async def run(session, text: str):
    turn = session.prompt(text)
    return turn, [u async for u in turn]


def final_text(updates: list[dict], call_id: str) -> tuple[str, str]:
    done = [u for u in updates if u.get("toolCallId") == call_id and u.get("status") in ("completed", "failed")][-1]
    return done["status"], "".join(b["content"]["text"] for b in done.get("content") or [])


async def test_show_message_request_asks_a_stock_lsp_client(spawn_daemon, workspace: Path):
    asked = []

    async def on_request(method, params):
        asked.append((method, params))
        return {"title": "Allow once"}

    daemon = await lsp_daemon(spawn_daemon, workspace, {"window": {"showMessage": {}}})
    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    _turn, updates = await run(session, "run the tests")
    ((method, params),) = asked
    assert method == "window/showMessageRequest"
    # a sandboxed command without network also offers it with the network (SPEC §3.23)
    assert [a["title"] for a in params["actions"]] == [
        "Allow once",
        "Allow once with network",
        "Allow always",
        "Reject",
    ]
    assert "echo testing" in params["message"]
    assert final_text(updates, "call_run")[0] == "completed"


async def test_a_client_answering_method_not_found_is_not_prompted_and_ask_mode_rejects(spawn_daemon, workspace: Path):
    asked = []

    async def on_request(method, params):
        asked.append(method)
        from tether_client import ClientError

        raise ClientError(method, {"code": -32601, "message": "method not found"})

    daemon = await lsp_daemon(spawn_daemon, workspace, {"window": {"showMessage": {}}})
    daemon.client.peer.on_request = on_request
    session = await daemon.client.new_session(workspace)
    _turn, updates = await run(session, "run the tests")
    status, text = final_text(updates, "call_run")
    assert status == "failed" and "cannot show approval prompts" in text
    _turn, updates = await run(session, "run the tests")
    assert asked == ["window/showMessageRequest"]  # remembered: not asked again


async def test_no_prompt_capability_falls_back_to_the_mode(spawn_daemon, workspace: Path):
    daemon = await lsp_daemon(spawn_daemon, workspace, {})
    session = await daemon.client.new_session(workspace)
    _turn, updates = await run(session, "run the tests")
    status, text = final_text(updates, "call_run")
    assert status == "failed" and "auto-edit or full-auto" in text
    await daemon.client.request("session/set_mode", {"sessionId": session.id, "modeId": "full-auto"})
    _turn, updates = await run(session, "run the tests")
    assert final_text(updates, "call_run")[0] == "completed"


async def test_apply_edit_goes_to_the_editor_against_the_buffer_version(spawn_daemon, workspace: Path):
    edits = []

    async def on_request(method, params):
        if method == "window/showMessageRequest":
            return {"title": "Allow once"}
        assert method == "workspace/applyEdit"
        edits.append(params)
        return {"applied": True}

    daemon = await lsp_daemon(
        spawn_daemon, workspace, {"workspace": {"applyEdit": True}, "window": {"showMessage": {}}}
    )
    daemon.client.peer.on_request = on_request
    uri = (workspace / "README.md").as_uri()
    unsaved = "# Sample\n\nHello from the sample workspace.\nAn unsaved line.\n"
    daemon.client.peer.notify(
        "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "markdown", "version": 7, "text": unsaved}}
    )
    session = await daemon.client.new_session(workspace)
    _turn, updates = await run(session, "edit the readme")
    (edit,) = edits
    (change,) = edit["edit"]["documentChanges"]
    assert change["textDocument"] == {"uri": uri, "version": 7}
    (text_edit,) = change["edits"]
    assert text_edit["range"] == {"start": {"line": 0, "character": 0}, "end": {"line": 4, "character": 0}}
    assert text_edit["newText"] == unsaved.replace("Hello from the sample workspace.", "Hello, edited by Tether.")
    # the file on disk is untouched: the editor owns the buffer
    assert "Hello from the sample workspace." in (workspace / "README.md").read_text()
    assert final_text(updates, "call_edit")[0] == "completed"


async def test_tools_read_the_editors_unsaved_text_with_incremental_changes(spawn_daemon, workspace: Path):
    daemon = await lsp_daemon(spawn_daemon, workspace, {})
    uri = (workspace / "README.md").as_uri()
    daemon.client.peer.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": "# Sample\n\nHello\n"}},
    )
    daemon.client.peer.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [
                {
                    "range": {"start": {"line": 2, "character": 5}, "end": {"line": 2, "character": 5}},
                    "text": " from the 😀 buffer",
                }
            ],
        },
    )
    daemon.client.peer.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": 3},
            # after the emoji (2 UTF-16 code units) the columns are UTF-16 units, not characters
            "contentChanges": [
                {
                    "range": {"start": {"line": 2, "character": 18}, "end": {"line": 2, "character": 18}},
                    "text": "unsaved ",
                }
            ],
        },
    )
    session = await daemon.client.new_session(workspace)
    _turn, updates = await run(session, "edit the readme")
    read = next(u for u in updates if u.get("toolCallId") == "call_read" and u.get("status") == "completed")
    assert "Hello from the 😀 unsaved buffer" in read["content"][0]["content"]["text"]
    daemon.client.peer.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


async def test_acp_clients_with_fs_get_reads_and_writes_through_the_editor(spawn_daemon, workspace: Path):
    calls = []
    buffer = {"text": "# Sample\n\nHello from the sample workspace.\n(editor copy)\n"}

    async def on_request(method, params):
        calls.append(method)
        if method == "fs/read_text_file":
            assert params["path"] == str(workspace / "README.md")
            return {"content": buffer["text"]}
        if method == "fs/write_text_file":
            buffer["text"] = params["content"]
            return {}
        if method == "session/request_permission":
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        raise AssertionError(method)

    daemon = await spawn_daemon(script=SCRIPT, initialize=False)
    daemon.client.peer.on_request = on_request
    await daemon.client.initialize(clientCapabilities={"fs": {"readTextFile": True, "writeTextFile": True}})
    session = await daemon.client.new_session(workspace)
    _turn, _updates = await run(session, "edit the readme")
    assert "fs/write_text_file" in calls and "session/request_permission" in calls
    assert buffer["text"] == "# Sample\n\nHello, edited by Tether.\n(editor copy)\n"
    assert "Hello from the sample workspace." in (workspace / "README.md").read_text()


async def test_clients_asking_for_terminal_output_meta_get_it_for_commands(spawn_daemon, workspace: Path):
    daemon = await spawn_daemon("--mode", "full-auto", script=SCRIPT, initialize=False)
    await daemon.client.initialize(clientCapabilities={"fs": {}, "terminal": False, "_meta": {"terminal_output": True}})
    session = await daemon.client.new_session(workspace)
    _turn, updates = await run(session, "stream output")
    mine = [u for u in updates if u.get("toolCallId") == "call_stream"]
    info = [u for u in mine if "terminal_info" in u.get("_meta", {})]
    assert info and info[0]["content"] == [{"type": "terminal", "terminalId": "call_stream"}]
    data = "".join(u["_meta"]["terminal_output"]["data"] for u in mine if "terminal_output" in u.get("_meta", {}))
    assert data == "line1\nline2\nline3\n"
    (exit_update,) = [u for u in mine if "terminal_exit" in u.get("_meta", {})]
    assert exit_update["_meta"]["terminal_exit"] == {"terminal_id": "call_stream", "exit_code": 0, "signal": None}
    assert mine.index(exit_update) < mine.index([u for u in mine if u.get("status") == "completed"][-1])
