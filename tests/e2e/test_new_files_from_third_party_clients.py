"""New files from ACP clients nobody on this project wrote: CodeCompanion.nvim and avante.nvim.

The real CodeCompanion runs in `tests/thirdparty/test_codecompanion.py` (vendored, in
headless Neovim). avante is not run: it is in no registry CI reaches and needs its
Rust-built libraries. Here both clients' answers are reproduced exactly as the plugins'
code gives them, over the real stdio daemon, to cover every case (avante's too):

* CodeCompanion.nvim v19.22.0, `lua/codecompanion/acp/init.lua`,
  `Connection:handle_fs_read_text_file_request` (lines 737-765): a read that fails with
  ENOENT is answered `{content = ""}` ("If the file does not exist we treat it as empty so
  the agent can create it"); `interactions/chat/acp/fs.lua` `M.read_text_file` (line 54)
  decides ENOENT with `uv.fs_stat`, on disk. Writes (`handle_fs_write_file_request`,
  lines 771-797) go through `utils/files.lua` `M.write_to_path`, which makes the parent
  directories, and answer `vim.NIL`.
* avante.nvim (main, a9334315), `lua/avante/llm.lua` `on_read_file` (lines 1270-1305):
  `Utils.read_file_from_buf_or_disk` (`lua/avante/utils/init.lua` lines 1382-1409)
  answers from a loaded buffer of the path first, else `fs_stat` fails and the read is
  answered with an error (code -32002 for ENOENT). Once avante has shown the tool call
  for approval the new path has a loaded, empty buffer, so the read Tether makes after
  the approval gets `content: ""` where the first one got ENOENT (issue 18). Writes
  (`on_write_file`, lines 1306-1327) use `io.open(path, "w")`: no parent directories
  are made, and a failure is sent as a *result* string ("Failed to write file: ...").
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tether_client import ClientError

ALLOW = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}


def script(tmp_path: Path) -> Path:
    def write(call_id: str, path: str, content: str) -> dict:
        return {"id": call_id, "name": "write_file", "arguments": {"path": path, "content": content}}

    replies = [
        {
            "when": {"user": "^create the todo", "step": 1},
            "text": "Creating it.",
            "tool_calls": [write("call_new", "notes/todo.txt", "- buy milk\n")],
        },
        {"when": {"user": "^create the todo", "step": 2}, "text": "Done."},
        {
            "when": {"user": "^overwrite empty", "step": 1},
            "text": "Writing.",
            "tool_calls": [write("call_empty", "empty.txt", "now full\n")],
        },
        {"when": {"user": "^overwrite empty", "step": 2}, "text": "Done."},
        {
            "when": {"user": "^overwrite draft", "step": 1},
            "text": "Writing.",
            "tool_calls": [write("call_draft", "draft.txt", "replaced\n")],
        },
        {"when": {"user": "^overwrite draft", "step": 2}, "text": "Done."},
    ]
    path = tmp_path / "new-files.json"
    path.write_text(json.dumps({"model": "scripted-new-files", "replies": replies}))
    return path


class CodeCompanion:
    """Answers fs/* and permission prompts as CodeCompanion.nvim v19.22.0 does (see the
    module docstring); `unsaved` are buffers the user has not saved (CodeCompanion itself
    reads the disk, so it never answers with them: other editors do)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []
        self.on_permission = lambda params: None

    def read(self, path: str) -> dict:
        if not os.path.exists(path):  # fs.lua: uv.fs_stat -> "ENOENT" -> init.lua: content ""
            return {"content": ""}
        return {"content": Path(path).read_text()}

    def write(self, path: str, content: str) -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)  # files.lua write_to_path: mkdir -p
        Path(path).write_text(content)
        return None  # vim.NIL

    async def on_request(self, method: str, params: dict):
        self.calls.append((method, params))
        if method == "fs/read_text_file":
            return self.read(params["path"])
        if method == "fs/write_text_file":
            return self.write(params["path"], params["content"])
        if method == "session/request_permission":
            self.on_permission(params)
            return ALLOW
        raise AssertionError(method)

    def methods(self) -> list[str]:
        return [m for m, _ in self.calls]


class Avante(CodeCompanion):
    """Answers as avante.nvim does: a loaded buffer first, else the disk, else ENOENT as an
    error; approving a call loads a buffer for each path it shows (empty for a new file)."""

    def __init__(self) -> None:
        super().__init__()
        self.buffers: dict[str, str] = {}

    def read(self, path: str) -> dict:
        if path in self.buffers:
            return {"content": self.buffers[path]}
        if not os.path.exists(path):
            message = f"ENOENT: no such file or directory: {path}"
            raise ClientError("fs/read_text_file", {"code": -32002, "message": message})
        return {"content": "\n".join(Path(path).read_text().split("\n"))}

    def write(self, path: str, content: str):
        try:
            with open(path, "w") as f:  # io.open: no parent directories are made
                f.write(content)
        except OSError:
            return f"Failed to write file: {path}"
        if path in self.buffers:
            self.buffers[path] = content  # `:edit` reloads the buffer
        return None

    async def on_request(self, method: str, params: dict):
        if method == "session/request_permission":
            for block in params["toolCall"].get("content") or []:
                if block.get("type") == "diff":
                    self.buffers.setdefault(
                        block["path"], "" if not os.path.exists(block["path"]) else Path(block["path"]).read_text()
                    )
        return await super().on_request(method, params)


async def start(spawn_daemon, tmp_path: Path, workspace: Path, client: CodeCompanion):
    daemon = await spawn_daemon("--mode", "ask", script=script(tmp_path), initialize=False)
    daemon.client.peer.on_request = client.on_request
    await daemon.client.initialize(clientCapabilities={"fs": {"readTextFile": True, "writeTextFile": True}})
    return await daemon.client.new_session(workspace)


async def run(session, text: str) -> list[dict]:
    return [u async for u in session.prompt(text)]


def final(updates: list[dict], call_id: str) -> tuple[str, str]:
    done = [u for u in updates if u.get("toolCallId") == call_id and u.get("status") in ("completed", "failed")][-1]
    return done["status"], "".join(b["content"]["text"] for b in done.get("content") or [])


@pytest.mark.parametrize("client_type", [CodeCompanion, Avante], ids=["codecompanion", "avante"])
async def test_a_new_file_is_created_after_the_user_approves_it(
    spawn_daemon, tmp_path: Path, workspace: Path, client_type: type[CodeCompanion]
):
    client = client_type()
    session = await start(spawn_daemon, tmp_path, workspace, client)
    updates = await run(session, "create the todo")
    target = workspace / "notes" / "todo.txt"
    assert final(updates, "call_new") == ("completed", "Created notes/todo.txt: +1 -0 lines.")
    assert target.read_text() == "- buy milk\n"
    (prompt,) = [p for m, p in client.calls if m == "session/request_permission"]
    call = prompt["toolCall"]
    assert call["title"] == "Write notes/todo.txt" and call["kind"] == "edit"
    assert call["content"] == [{"type": "diff", "path": str(target), "newText": "- buy milk\n"}]  # no oldText: new
    assert call["locations"] == [{"path": str(target), "line": 1}]
    # the editor was asked before the prompt and again after it (each answered "no file" its own way)
    methods = client.methods()
    asked = methods.index("session/request_permission")
    assert "fs/read_text_file" in methods[:asked] and "fs/read_text_file" in methods[asked:]
    assert methods[-1] == "fs/write_text_file"


async def test_avante_answers_an_empty_buffer_after_the_approval(spawn_daemon, tmp_path: Path, workspace: Path):
    client = Avante()
    session = await start(spawn_daemon, tmp_path, workspace, client)
    await run(session, "create the todo")
    path = str(workspace / "notes" / "todo.txt")
    reads = [m for m, p in client.calls if m == "fs/read_text_file" and p["path"] == path]
    assert len(reads) == 2 and client.buffers[path] == "- buy milk\n"


async def test_an_empty_file_on_disk_still_needs_a_read_before_it_is_overwritten(
    spawn_daemon, tmp_path: Path, workspace: Path
):
    (workspace / "empty.txt").write_text("")
    client = CodeCompanion()
    session = await start(spawn_daemon, tmp_path, workspace, client)
    updates = await run(session, "overwrite empty")
    status, text = final(updates, "call_empty")
    assert status == "failed" and "read 'empty.txt' before overwriting it" in text
    assert "session/request_permission" not in client.methods()
    assert (workspace / "empty.txt").read_text() == ""


async def test_an_unsaved_buffer_not_on_disk_is_a_file_the_model_must_read(
    spawn_daemon, tmp_path: Path, workspace: Path
):
    class WithUnsavedBuffer(CodeCompanion):
        def read(self, path: str) -> dict:
            if path == str(workspace / "draft.txt"):
                return {"content": "the user's unsaved notes\n"}
            return super().read(path)

    client = WithUnsavedBuffer()
    session = await start(spawn_daemon, tmp_path, workspace, client)
    updates = await run(session, "overwrite draft")
    status, text = final(updates, "call_draft")
    assert status == "failed" and "read 'draft.txt' before overwriting it" in text
    assert "session/request_permission" not in client.methods() and "fs/write_text_file" not in client.methods()


async def test_a_file_created_while_the_prompt_was_open_is_not_overwritten(
    spawn_daemon, tmp_path: Path, workspace: Path
):
    client = CodeCompanion()
    target = workspace / "notes" / "todo.txt"

    def user_writes_it(params: dict) -> None:
        target.parent.mkdir()
        target.write_text("the user's own list\n")

    client.on_permission = user_writes_it
    session = await start(spawn_daemon, tmp_path, workspace, client)
    updates = await run(session, "create the todo")
    status, text = final(updates, "call_new")
    assert status == "failed" and "changed while the change was waiting for approval" in text
    assert target.read_text() == "the user's own list\n"
    assert "fs/write_text_file" not in client.methods()


async def test_avantes_failed_write_answered_as_a_result_fails_the_call(spawn_daemon, tmp_path: Path, workspace: Path):
    class ReadOnlyDisk(Avante):
        def write(self, path: str, content: str):
            return f"Failed to write file: {path}"  # what avante sends when io.open fails

    client = ReadOnlyDisk()
    session = await start(spawn_daemon, tmp_path, workspace, client)
    updates = await run(session, "create the todo")
    status, text = final(updates, "call_new")
    assert status == "failed" and "the editor could not write todo.txt: Failed to write file:" in text


async def test_an_empty_new_buffer_of_a_stock_lsp_client_is_created_through_apply_edit(
    spawn_daemon, tmp_path: Path, workspace: Path
):
    """An editor that has opened `notes/todo.txt` as a new, empty, unsaved buffer (document
    sync, no file on disk): the same "no file" as an empty ACP answer, written to the buffer."""
    edits: list[dict] = []

    async def on_request(method: str, params: dict):
        if method == "window/showMessageRequest":
            return {"title": "Allow once"}
        assert method == "workspace/applyEdit"
        edits.append(params)
        return {"applied": True}

    daemon = await spawn_daemon("--mode", "ask", script=script(tmp_path), initialize=False)
    daemon.client.peer.on_request = on_request
    capabilities = {"workspace": {"applyEdit": True}, "window": {"showMessage": {}}}
    await daemon.client.request(
        "initialize", {"processId": None, "rootUri": workspace.as_uri(), "capabilities": capabilities}
    )
    daemon.client.peer.notify("initialized", {})
    uri = (workspace / "notes" / "todo.txt").as_uri()
    daemon.client.peer.notify(
        "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "text", "version": 1, "text": ""}}
    )
    session = await daemon.client.new_session(workspace)
    updates = await run(session, "create the todo")
    assert final(updates, "call_new") == ("completed", "Created notes/todo.txt: +1 -0 lines.")
    (edit,) = edits
    (change,) = edit["edit"]["documentChanges"]
    assert change["textDocument"] == {"uri": uri, "version": 1}
    assert change["edits"][0]["newText"] == "- buy milk\n"


@pytest.mark.parametrize("operations", [None, ["rename", "delete"]])
async def test_a_new_file_for_an_lsp_client_that_declared_no_create_is_written_on_disk(
    spawn_daemon, tmp_path: Path, workspace: Path, operations
):
    """eglot 1.9 declares no `create` in `workspace.workspaceEdit.resourceOperations`: it is
    sent no CreateFile (nor an edit of a file that does not exist); the file is written."""
    asked: list[str] = []

    async def on_request(method: str, params: dict):
        asked.append(method)
        if method == "window/showMessageRequest":
            return {"title": "Allow once"}
        return {"applied": True}

    daemon = await spawn_daemon("--mode", "ask", script=script(tmp_path), initialize=False)
    daemon.client.peer.on_request = on_request
    workspace_caps: dict = {"applyEdit": True}
    if operations is not None:
        workspace_caps["workspaceEdit"] = {"resourceOperations": operations}
    await daemon.client.request(
        "initialize",
        {
            "processId": None,
            "rootUri": workspace.as_uri(),
            "capabilities": {"workspace": workspace_caps, "window": {"showMessage": {}}},
        },
    )
    daemon.client.peer.notify("initialized", {})
    session = await daemon.client.new_session(workspace)
    updates = await run(session, "create the todo")
    assert final(updates, "call_new")[0] == "completed"
    assert "workspace/applyEdit" not in asked
    assert (workspace / "notes" / "todo.txt").read_text() == "- buy milk\n"
