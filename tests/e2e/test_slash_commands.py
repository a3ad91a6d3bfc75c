"""Slash commands through the real daemon as a user runs them: `tether run "/review"`."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

SCRIPT = {
    "model": "scripted-review",
    "replies": [
        {"when": {"user": "(?s)Review the uncommitted.*<diff>.*\\+    return 43"}, "text": "REVIEWED: returns 43 now."},
        {"text": "NOT A REVIEW"},
    ],
}


def _git(workspace: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=workspace, check=True, capture_output=True)


def test_tether_run_review_reviews_the_uncommitted_diff(daemon_env, workspace: Path, tmp_path: Path):
    _git(workspace, "init", "-q")
    _git(workspace, "add", ".")
    _git(workspace, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    (workspace / "src" / "app.py").write_text("def main():\n    return 43\n")
    script = tmp_path / "review.json"
    script.write_text(json.dumps(SCRIPT))
    done = subprocess.run(
        [sys.executable, "-m", "tether", "run", "/review", "--provider", "scripted", "--script", str(script)],
        env=daemon_env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "REVIEWED: returns 43 now." in done.stdout and "NOT A REVIEW" not in done.stdout


async def test_a_command_file_session_is_titled_with_what_the_user_typed(spawn_daemon, workspace: Path, tmp_path: Path):
    (workspace / ".tether" / "commands").mkdir(parents=True)
    (workspace / ".tether" / "commands" / "fix-issue.md").write_text(
        "You are fixing a bug. Read the issue $ARGUMENTS carefully, then find the code it names.\n"
    )
    script = tmp_path / "fix.json"
    script.write_text(
        json.dumps(
            {
                "model": "m",
                "replies": [
                    {"when": {"user": "^You are fixing a bug. Read the issue 12 carefully"}, "text": "FIXING 12"},
                    {"text": "NOT EXPANDED"},
                ],
            }
        )
    )
    daemon = await spawn_daemon(script=script)
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("/fix-issue 12")
    await turn.wait()
    assert (
        "".join(u["content"]["text"] for u in turn.updates if u["sessionUpdate"] == "agent_message_chunk")
        == "FIXING 12"
    )  # the model got the expansion
    titles = [u["title"] for u in turn.updates if u["sessionUpdate"] == "session_info_update" and "title" in u]
    assert titles == ["/fix-issue 12"]
    (listed,) = [s for s in await daemon.client.list_sessions(workspace) if s["sessionId"] == session.id]
    assert listed["title"] == "/fix-issue 12"
    # a plain prompt is still titled with its own first line
    other = await daemon.client.new_session(workspace)
    plain = other.prompt("What does the README say?\nPlease be brief.")
    await plain.wait()
    assert [u["title"] for u in plain.updates if u["sessionUpdate"] == "session_info_update" and "title" in u] == [
        "What does the README say?"
    ]
