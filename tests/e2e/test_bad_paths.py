"""Paths the daemon cannot use, from the client: each is a clear error naming the path and
what to send instead (never -32603, which is for Tether's own bugs)."""

from __future__ import annotations

import pytest

from tether_client import ClientError


@pytest.mark.parametrize("cwd", ["/" + "a" * 300, "/tmp/" + "b/" * 2100, "/tmp/with\0nul"])
async def test_an_unusable_cwd_is_workspace_invalid(spawn_daemon, cwd: str):
    daemon = await spawn_daemon()
    for method, params in (
        ("session/new", {"cwd": cwd, "mcpServers": []}),
        ("session/list", {"cwd": cwd}),
        ("session/load", {"sessionId": "sess_x", "cwd": cwd, "mcpServers": []}),
    ):
        with pytest.raises(ClientError) as error:
            await daemon.client.request(method, params)
        assert error.value.code == -32014, (method, error.value.message)
        assert "cwd" in error.value.message and "absolute path to a directory" in error.value.message


@pytest.mark.parametrize("uri", ["file:///tmp/%00x", "file:///" + "c" * 300])
async def test_an_unusable_workspace_folder_at_initialize_is_invalid_params(spawn_daemon, uri: str):
    daemon = await spawn_daemon(initialize=False)
    with pytest.raises(ClientError) as error:
        await daemon.client.initialize(rootUri=uri, capabilities={})
    assert error.value.code == -32602
    assert "workspace folder" in error.value.message and "not a usable path" in error.value.message
