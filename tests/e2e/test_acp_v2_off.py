"""`acp_v2 = "off"` (SPEC §12.1): a client asking for ACP v2 gets the v1 answer and a v1
session, as from a v1-only agent, and is told v1 is all that is offered."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize("setting", ["TETHER_ACP_V2", "config"])
async def test_a_v2_client_of_a_daemon_with_v2_off_gets_v1(
    spawn_daemon,
    workspace: Path,
    tmp_path: Path,
    setting: str,
) -> None:
    env: dict[str, str] = {}
    if setting == "config":
        config = tmp_path / "user-config.toml"
        config.write_text('acp_v2 = "off"\n')
        env["TETHER_CONFIG"] = str(config)
    else:
        env["TETHER_ACP_V2"] = "off"
    daemon = await spawn_daemon(env=env, initialize=False)
    answer = await daemon.client.request(
        "initialize",
        {"protocolVersion": 2, "info": {"name": "v2-editor", "version": "1"}, "capabilities": {}},
    )

    assert answer["protocolVersion"] == 1 and "agentInfo" in answer and "info" not in answer
    assert answer["_meta"]["tether"]["protocolVersions"] == [1]
    session = await daemon.client.request("session/new", {"cwd": str(workspace), "mcpServers": []})
    assert "modes" in session  # v1's answer (v2 has no modes)


async def test_with_v2_on_the_same_client_gets_v2(spawn_daemon, workspace: Path) -> None:
    daemon = await spawn_daemon(initialize=False)
    answer = await daemon.client.request(
        "initialize",
        {"protocolVersion": 2, "info": {"name": "v2-editor", "version": "1"}, "capabilities": {}},
    )
    assert answer["protocolVersion"] == 2 and answer["_meta"]["tether"]["protocolVersions"] == [1, 2]
    session = await daemon.client.request("session/new", {"cwd": str(workspace), "mcpServers": []})
    assert "modes" not in session
