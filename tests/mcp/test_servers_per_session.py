"""A session's MCP servers are its own (issue 32 item 2: they live on its `LiveSession`):
closing one session of a connection stops its servers, and another session of the same
connection keeps its own running and usable. Real daemon, real server-everything over stdio."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from mcp_harness import SCRIPT, final, new_session, programs, run, text

from daemon_harness import host_pids, until

if TYPE_CHECKING:
    from pathlib import Path


def _servers(everything: Path, token: str) -> list[dict]:
    return [{"name": "everything", "command": "node", "args": [str(everything), "stdio", token], "env": []}]


async def test_closing_one_session_stops_its_servers_and_not_the_other_sessions(
    spawn_daemon, workspace, everything: Path, tmp_path: Path
):
    mine, theirs = f"tether-mcp-mine-{tmp_path.name}", f"tether-mcp-theirs-{tmp_path.name}"
    daemon = await spawn_daemon(script=SCRIPT)
    closing = await new_session(daemon, workspace, _servers(everything, mine))
    staying = await new_session(daemon, workspace, _servers(everything, theirs))
    # both sessions' servers start when they open (one node process each)
    await until(lambda: programs(host_pids(mine)).count("node") == 1, timeout=30)
    await until(lambda: programs(host_pids(theirs)).count("node") == 1, timeout=30)

    await closing.close()
    await until(lambda: host_pids(mine) == [], timeout=30)
    await asyncio.sleep(0.5)  # time enough for a wrong stop to reach the other server
    assert programs(host_pids(theirs)).count("node") == 1
    # and the session that stays open still has its server's tools
    turn, updates = await run(staying, "everything at once")
    assert turn.stop_reason == "end_turn"
    assert "The sum of 2 and 3 is 5" in text(final(updates, "call_sum"))
