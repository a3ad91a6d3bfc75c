"""A workspace that holds Tether's own config and history (the home folder opened as a
workspace): the file tools neither read, list nor search them, as commands cannot."""

from __future__ import annotations

import json
from pathlib import Path

KEY = "sk-fake-in-the-workspace-7c1d"


async def test_the_tools_do_not_reach_tethers_config_and_history_inside_the_workspace(
    spawn_daemon, workspace: Path, tmp_path: Path
):
    config = workspace / ".config" / "tether" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'api_key = "{KEY}"\n')
    home = workspace / ".local" / "share" / "tether"
    script = tmp_path / "peek.json"
    script.write_text(json.dumps({"replies": [
        {"when": {"step": 1}, "tool_calls": [
            {"id": "read", "name": "read_file", "arguments": {"path": ".config/tether/config.toml"}},
            {"id": "grep", "name": "grep", "arguments": {"pattern": "sk-fake"}},
            {"id": "list", "name": "list_dir", "arguments": {"path": ".", "depth": 5}},
            {"id": "glob", "name": "glob", "arguments": {"pattern": "**/*.toml"}},
        ]},
        {"text": "done"},
    ]}))
    daemon = await spawn_daemon(
        script=script, env={"XDG_CONFIG_HOME": str(workspace / ".config"), "TETHER_HOME": str(home)}
    )
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("look for keys")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    assert home.is_dir()  # the history is there, in the workspace
    assert KEY not in json.dumps(updates)
    results = {
        u["toolCallId"]: "".join(b["content"]["text"] for b in u.get("content") or [] if b.get("type") == "content")
        for u in updates if u.get("status") in ("completed", "failed")
    }
    assert "Tether's own configuration or history" in results["read"]
    assert ".config/tether" not in results["list"] and "share/tether" not in results["list"]
    assert "config.toml" not in results["glob"]
    assert "README.md" in results["list"]  # the rest of the workspace is there
