"""What a v2 client is sent outside a turn (SPEC §12.3): a mode change through
`/mode` comes as v2's `config_option_update` (options keyed `configId`), and
v1's `current_mode_update` (v2 has no modes) is not sent. Real daemon over stdio; each update is
decoded with the v2 types generated from the Preview schema."""

from __future__ import annotations

from typing import TYPE_CHECKING

from daemon_harness import until
from tether_protocol.acp_v2 import convert
from tether_protocol.acp_v2 import schema_types as v2

if TYPE_CHECKING:
    from pathlib import Path


async def test_a_mode_change_reaches_a_v2_client_in_v2s_shape(spawn_daemon, workspace: Path) -> None:
    daemon = await spawn_daemon(initialize=False)
    assert (await daemon.client.initialize(protocolVersion=2))["protocolVersion"] == 2
    made = await daemon.client.request("session/new", {"cwd": str(workspace), "mcpServers": []})
    session_id = made["sessionId"]
    assert [o["configId"] for o in made["configOptions"]]  # the answer is in v2's names too
    updates = daemon.client._unclaimed.setdefault(session_id, [])
    await until(lambda: any(u["sessionUpdate"] == "available_commands_update" for u in updates))
    await daemon.client.request(
        "session/set_config_option", {"sessionId": session_id, "configId": "mode", "value": "read-only"}
    )
    await daemon.client.request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "/mode ask"}]}
    )
    await until(lambda: any(u["sessionUpdate"] == "state_update" and u["state"] == "idle" for u in updates))
    for update in updates:
        note = convert({"sessionId": session_id, "update": update}, v2.UpdateSessionNotification, method="update")
        assert not isinstance(note.update.value, dict), f"not a v2 update kind: {update}"
    changes = [u for u in updates if u["sessionUpdate"] == "config_option_update"]
    modes = [next(o for o in u["configOptions"] if o["configId"] == "mode") for u in changes]
    assert [m["currentValue"] for m in modes] == ["ask"], modes  # `set_config_option` answers with them
    assert all("id" not in o for u in changes for o in u["configOptions"])
    assert "current_mode_update" not in {u["sessionUpdate"] for u in updates}
