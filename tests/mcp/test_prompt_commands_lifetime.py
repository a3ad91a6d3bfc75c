"""A session's MCP prompt commands are its own (issue 32 item 2): kept on the live session,
shown in its `/` menu only, gone when it closes. Real daemon, the `trouble` server over stdio."""

from __future__ import annotations

import sys

from mcp_harness import SCRIPT, TROUBLE, new_session, run

from daemon_harness import until

SERVERS = [{"name": "trouble", "command": sys.executable, "args": [str(TROUBLE)], "env": []}]


def _menus(updates: list[dict]) -> list[set[str]]:
    return [
        {c["name"] for c in u["availableCommands"]}
        for u in updates
        if u["sessionUpdate"] == "available_commands_update"
    ]


async def test_prompt_commands_stay_with_their_session_and_go_when_it_closes(spawn_daemon, workspace) -> None:
    daemon = await spawn_daemon(script=SCRIPT)
    first = await new_session(daemon, workspace, SERVERS)
    await run(first, "env names")  # its server starts at its first prompt
    _turn, updates = await run(first, "env names")  # the next prompt's menu has the server's prompt
    assert "trouble:review" in _menus(updates)[-1]
    other = await new_session(daemon, workspace)  # another id, no servers of its own
    await until(lambda: _menus(other.updates))
    await run(other, "env names")
    assert all("trouble:review" not in menu for menu in _menus(other.updates)), other.updates
    await first.close()
    loaded = await daemon.client.load_session(first.id, workspace)  # made live again, without servers
    await until(lambda: _menus(loaded.updates))
    assert "trouble:review" not in _menus(loaded.updates)[-1], loaded.updates
