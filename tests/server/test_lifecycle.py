"""initialize/shutdown/exit, document sync and the stats method, called in-process."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from server_harness import Answered, running

from tether import __version__

if TYPE_CHECKING:
    from pathlib import Path

    from tether.config import Settings

ACP_INIT = {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}}}


async def test_initialize_once_then_shutdown_and_exit(settings: Settings, workspace: Path):
    async with running(settings, workspace) as daemon:
        answer = await daemon.call("initialize", ACP_INIT)
        assert answer["protocolVersion"] == 1 and answer["agentCapabilities"]["loadSession"] is True
        with pytest.raises(Answered) as again:
            await daemon.call("initialize", ACP_INIT)
        assert again.value.code == -32600
        assert again.value.message == "invalid request: initialize was already answered on this connection"
        assert await daemon.call("shutdown") is None
        assert daemon.server.rpc.shutting_down and not daemon.server.stopped.is_set()
        assert await daemon.call("exit") is None
        assert daemon.server.stopped.is_set() and daemon.server.exit_code == 0


async def test_exit_without_shutdown_exits_1(settings: Settings, workspace: Path):
    async with running(settings, workspace) as daemon:
        await daemon.call("exit")
        assert daemon.server.exit_code == 1


async def test_documents_follow_the_editor_and_stats_count_sessions(settings: Settings, workspace: Path):
    async with running(settings, workspace) as daemon:
        uri = (workspace / "README.md").as_uri()
        await daemon.call("textDocument/didOpen", {"textDocument": {"uri": uri, "version": 1, "text": "a\nb\n"}})
        await daemon.call(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [
                    {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 1}}, "text": "B"}
                ],
            },
        )
        assert daemon.server.documents.texts == {str(workspace / "README.md"): "a\nB\n"}
        with pytest.raises(Answered) as no_uri:
            await daemon.call("textDocument/didOpen", {"textDocument": {}})
        assert (
            no_uri.value.message
            == "invalid params for textDocument/didOpen: textDocument.uri (a file:// URI string) is required"
        )
        await daemon.call("textDocument/didClose", {"textDocument": {"uri": uri}})
        assert daemon.server.documents.texts == {}

        await daemon.new_session(workspace)
        stats = await daemon.call("_tether/daemon/stats")
        assert stats["version"] == __version__ and stats["liveSessions"] == 1
