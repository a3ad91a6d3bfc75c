"""A stock LSP client (pytest-lsp's pygls client) drives Tether over LSP framing.

This is what a plugin built on an editor's language-client library sees: the LSP
lifecycle, then ACP methods as custom requests and `session/update` notifications.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import JsonRPCNotification, JsonRPCResponseMessage, default_converter
from pytest_lsp import ClientServerConfig, LanguageClient

from daemon_harness import BASIC_SCRIPT, kinds


def _dict_converter():
    """pygls turns untyped params/results into namedtuples; keep them as dicts."""
    converter = default_converter()
    converter.register_structure_hook(JsonRPCResponseMessage, lambda obj, cls: cls(**obj))
    converter.register_structure_hook(JsonRPCNotification, lambda obj, cls: cls(**obj))
    return converter


def _client() -> LanguageClient:
    client = LanguageClient(converter_factory=_dict_converter)
    client.updates = []

    @client.feature("session/update")
    def on_update(params):
        client.updates.append(params)

    return client


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[
            sys.executable,
            "-m",
            "tether",
            "serve",
            "--provider",
            "scripted",
            "--script",
            str(BASIC_SCRIPT),
        ],
        client_factory=_client,
    ),
)
async def lsp_client(lsp_client: LanguageClient, workspace: Path, daemon_env, monkeypatch):
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(apply_edit=True),
            window=types.WindowClientCapabilities(show_message=types.ShowMessageRequestClientCapabilities()),
        ),
        root_uri=workspace.as_uri(),
    )
    lsp_client.init_result = await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


@pytest.fixture(autouse=True)
def _isolated_home(daemon_env, monkeypatch):
    # pytest-lsp starts the server with this process's environment
    for key, value in daemon_env.items():
        monkeypatch.setenv(key, value)


async def test_lsp_initialize_answers_both_lsp_and_acp(lsp_client: LanguageClient):
    result = lsp_client.init_result
    assert result.server_info.name == "tether"


async def test_lsp_client_runs_a_turn_with_custom_requests(lsp_client: LanguageClient, workspace: Path):
    new = await lsp_client.protocol.send_request_async("session/new", {"cwd": str(workspace), "mcpServers": []})
    session_id = new["sessionId"]
    answer = await lsp_client.protocol.send_request_async(
        "session/prompt",
        {"sessionId": session_id, "prompt": [{"type": "text", "text": "read the README"}]},
    )
    assert answer["stopReason"] == "end_turn"
    updates = [p["update"] for p in lsp_client.updates if p["sessionId"] == session_id]
    assert "tool_call" in kinds(updates)
    done = [u for u in updates if u.get("status") == "completed"]
    assert "Hello from the sample workspace." in done[0]["content"][0]["content"]["text"]
    # the LSP root is the default workspace for session/list
    listed = await lsp_client.protocol.send_request_async("session/list", {})
    assert [s["sessionId"] for s in listed["sessions"]] == [session_id]
