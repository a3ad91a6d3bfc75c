"""pytest-lsp's stock client (pygls) with the capabilities real editors send — Emacs 29's
eglot (work-done progress, no `window.showMessage`, no `window/showDocument`) and Neovim
0.11 (all three), as recorded by pytest-lsp — drives the LSP agent front: its own handlers
record the progress, the messages and the documents shown, as such an editor would show them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

from daemon_harness import until

HERE = Path(__file__).resolve().parent


def _client() -> LanguageClient:
    client = make_test_lsp_client()  # pytest-lsp's own handlers: progress, messages, documents
    client.asked = []

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def approve(params: types.ShowMessageRequestParams):
        client.asked.append(params.message)
        return types.MessageActionItem(title="Allow once")

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply(params: types.ApplyWorkspaceEditParams):
        client.edits.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    client.edits = []
    return client


@pytest_lsp.fixture(
    params=["emacs@v29.1", "neovim@v0.11.0"],
    config=ClientServerConfig(
        server_command=[
            sys.executable,
            "-m",
            "tether",
            "serve",
            "--provider",
            "scripted",
            "--script",
            str(HERE / "lsp-agent.json"),
        ],
        client_factory=_client,
    ),
)
async def lsp_client(lsp_client: LanguageClient, request, workspace: Path):
    params = types.InitializeParams(capabilities=client_capabilities(request.param), root_uri=workspace.as_uri())
    lsp_client.editor = request.param
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


@pytest.fixture(autouse=True)
def _isolated_home(daemon_env, monkeypatch):
    for key, value in daemon_env.items():  # pytest-lsp starts the server with this environment
        monkeypatch.setenv(key, value)


async def test_a_stock_client_asks_watches_approves_and_edits(lsp_client: LanguageClient, tether_home: Path):
    started = await lsp_client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="tether.ask", arguments=["edit the readme"])
    )
    assert started["turnId"].startswith("turn_")
    await lsp_client.wait_for_notification(types.WINDOW_SHOW_MESSAGE)
    (shown,) = lsp_client.messages
    assert shown.type == types.MessageType.Info
    assert shown.message == "Tether: Done: the README says hello from Tether."
    # both editors declare work-done progress: one for the turn, one per tool call
    turn = lsp_client.progress_reports[f"tether/{started['turnId']}"]
    assert turn[0].title == "Tether: edit the readme" and turn[-1].message == "done"
    calls = {
        token.rsplit("/", 1)[1]: reports
        for token, reports in lsp_client.progress_reports.items()
        if token.count("/") == 2
    }
    assert calls["call_edit"][0].title == "Edit README.md" and calls["call_edit"][-1].message == "Edit README.md: done"
    # Emacs 29 declares no window.showMessage: it is asked all the same (SPEC §3.33)
    # the message says what "Allow always" would store (an action's title is how the answer is read)
    assert lsp_client.asked == [
        "Tether: Edit README.md\nREADME.md\n(mode ask asks before editing README.md)\n"
        '"Allow always": Always allow edits to `README.md` in this workspace, until you '
        "remove it (approval rules)"
    ]
    (edit,) = lsp_client.edits
    (change,) = edit.edit.document_changes
    assert change.edits[0].new_text == "# Sample\n\nHello, edited by Tether.\n"
    (full,) = [m for m in lsp_client.log_messages if m.type == types.MessageType.Info]
    assert full.message.startswith("Tether:\nDone: the README says hello from Tether.")
    if lsp_client.editor.startswith("neovim"):  # Neovim declares window.showDocument
        await until(lambda: lsp_client.shown_documents)  # a request, answered by pytest-lsp
        (document,) = lsp_client.shown_documents
        assert document.take_focus is False
        assert Path(document.uri.removeprefix("file://")).is_relative_to(tether_home)
    else:
        assert lsp_client.shown_documents == []
