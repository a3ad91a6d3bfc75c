"""MCP servers start when the session opens, in the background: a hung one holds neither
`session/new` nor the others, and `/mcp` shows each server's state and tools."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from mcp_harness import SCRIPT, new_session, notices, run, trouble_table, user_config

if TYPE_CHECKING:
    from pathlib import Path


async def mcp_report(session) -> str:
    turn, updates = await run(session, "/mcp")
    assert turn.stop_reason == "end_turn"
    return notices(updates)


async def test_servers_start_at_session_open_and_mcp_shows_their_state_and_tools(
    spawn_daemon, workspace, tmp_path: Path
):
    user_config(tmp_path, trouble_table() + trouble_table("hanging", "hang", extra="startup_timeout_sec = 60"))
    daemon = await spawn_daemon(script=SCRIPT)
    session = await new_session(daemon, workspace)  # answered while `hanging` never answers
    deadline = time.monotonic() + 30
    report = await mcp_report(session)
    while "trouble (stdio:" not in report or ": ready" not in report:  # no prompt has run: it started at open
        assert time.monotonic() < deadline, report
        report = await mcp_report(session)
    lines = report.splitlines()
    ready = next(i for i, line in enumerate(lines) if line.startswith("trouble (stdio:"))
    assert lines[ready].endswith(": ready")
    tools = lines[ready + 1]
    assert tools.startswith("  tools: ") and "note" in tools and "env_names" in tools
    assert any(line.startswith("hanging (stdio:") and line.endswith(": starting") for line in lines)


async def test_mcp_without_servers_says_how_to_add_them(spawn_daemon, workspace):
    daemon = await spawn_daemon(script=SCRIPT)
    session = await new_session(daemon, workspace)
    assert "this session has no MCP servers; add them under [mcp_servers.<name>]" in await mcp_report(session)
