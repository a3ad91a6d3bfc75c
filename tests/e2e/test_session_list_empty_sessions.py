"""session/list as CodeCompanion uses it: every chat it opens creates a session at once
(session/new, no prompt), and its `/resume` crashed on the `"title": null` of those.
Sessions never prompted are left out unless asked for, and no session has a null field."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

from daemon_harness import BASIC_SCRIPT

if TYPE_CHECKING:
    from pathlib import Path

INCLUDE_EMPTY = {"tether": {"includeEmpty": True}}


def _nulls(value: object, where: str = "") -> list[str]:
    if value is None:
        return [where]
    if isinstance(value, dict):
        return [hit for key, item in value.items() for hit in _nulls(item, f"{where}.{key}")]
    if isinstance(value, list):
        return [hit for n, item in enumerate(value) for hit in _nulls(item, f"{where}[{n}]")]
    return []


async def test_a_chat_opened_and_never_prompted_is_not_listed_and_nothing_is_null(
    spawn_daemon, workspace: Path, daemon_env: dict[str, str]
) -> None:
    command = [sys.executable, "-m", "tether", "acp", "--provider", "scripted", "--script", str(BASIC_SCRIPT)]
    daemon = await spawn_daemon(command=command, framing="ndjson")
    talked = await daemon.client.new_session(workspace)
    turn = talked.prompt("What does the README say?")
    await turn.wait()
    opened = await daemon.client.new_session(workspace)  # CodeCompanion opening its chat buffer

    listed = await daemon.client.request("session/list", {"cwd": str(workspace)})
    assert [s["sessionId"] for s in listed["sessions"]] == [talked.id]
    assert listed["sessions"][0]["title"]
    assert _nulls(listed) == []

    everything = await daemon.client.request("session/list", {"cwd": str(workspace), "_meta": INCLUDE_EMPTY})
    assert [s["sessionId"] for s in everything["sessions"]] == [opened.id, talked.id]
    assert "title" not in everything["sessions"][0]  # omitted, never null
    assert _nulls(everything) == []

    # the shell's list agrees: the empty session only with --all
    def cli(*extra: str) -> str:
        run = subprocess.run(
            [sys.executable, "-m", "tether", "sessions", "list", *extra],
            env=daemon_env,
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0, run.stderr
        return run.stdout

    assert talked.id in cli() and opened.id not in cli()
    assert opened.id in cli("--all") and "(untitled)" in cli("--all")
