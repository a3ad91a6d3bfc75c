"""Issue 35 item 2 for MCP servers: a user's sandboxed server cannot read the credential
stores either, and what its tools return that looks like a secret is masked before the
model sees it (the user gets a notice)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from mcp_harness import final, text, trouble_table, user_config

if TYPE_CHECKING:
    from pathlib import Path

GITHUB = "ghp_" + "Mc9" * 12  # built here: this file holds no literal token


async def test_a_server_cannot_read_the_stores_and_its_secrets_are_masked(
    spawn_daemon, workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home-user"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("SSHKEY-MATERIAL-mcp-71\n")
    (workspace / "leak.txt").write_text(f"GITHUB_TOKEN={GITHUB}\nplain line\n")
    user_config(tmp_path, trouble_table())
    calls = [
        {"id": "ssh", "name": "mcp__trouble__read_text", "arguments": {"path": str(home / ".ssh" / "id_ed25519")}},
        {"id": "leak", "name": "mcp__trouble__read_text", "arguments": {"path": str(workspace / "leak.txt")}},
    ]
    script = tmp_path / "reads.json"
    script.write_text(json.dumps({"replies": [{"when": {"step": 1}, "tool_calls": calls}, {"text": "done"}]}))
    daemon = await spawn_daemon("--mode", "full-auto", script=script, env={"HOME": str(home)})
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("read them")
    updates = [u async for u in turn]
    assert turn.stop_reason == "end_turn"
    everything = json.dumps(updates)
    assert "SSHKEY-MATERIAL-mcp-71" not in everything
    assert "cannot read" in text(final(updates, "ssh"))
    leak = text(final(updates, "leak"))
    assert "GITHUB_TOKEN=[masked: looks like a GitHub token]" in leak and "plain line" in leak, leak
    assert GITHUB not in everything
    assert "Tether masked 1 secret in this tool result" in everything
