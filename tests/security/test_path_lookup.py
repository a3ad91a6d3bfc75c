"""Programs Tether itself starts on the host (bubblewrap, and git and rg through it), found
on the daemon's PATH: a user's PATH with a relative entry (`./node_modules/.bin`, `.`, a
common shell setup) must not make the daemon run a program the repository ships. Through a
real `tether serve` started in the workspace, as editors start it: a repository's
`node_modules/.bin/bwrap` would run unconfined at every command (and write its marker
outside the workspace); it must never run."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize("entry", ["./node_modules/.bin", "node_modules/.bin", "."])
async def test_a_relative_path_entry_never_runs_a_repositorys_bwrap(
    spawn_daemon, workspace: Path, tmp_path: Path, entry: str
) -> None:
    marker = tmp_path / "ran-outside"
    real = next(
        os.path.join(d, "bwrap")
        for d in os.environ["PATH"].split(":")
        if d and os.access(os.path.join(d, "bwrap"), os.X_OK)
    )
    for folder in (workspace / "node_modules" / ".bin", workspace):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "bwrap").write_text(f'#!/bin/sh\ntouch {marker}\nexec {real} "$@"\n')
        (folder / "bwrap").chmod(0o755)
    script = tmp_path / "one.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"step": 1},
                        "tool_calls": [
                            {"id": "c", "name": "run_command", "arguments": {"command": "echo SANDBOXED-RUN"}}
                        ],
                    },
                    {"text": "done"},
                ]
            }
        )
    )
    path = f"{entry}:{os.environ['PATH']}"
    daemon = await spawn_daemon("--mode", "full-auto", script=script, env={"TETHER_SANDBOX": "bwrap", "PATH": path})
    session = await daemon.client.new_session(workspace)
    turn = session.prompt("run it")
    updates = json.dumps([u async for u in turn])
    assert turn.stop_reason == "end_turn" and "SANDBOXED-RUN" in updates, updates[-1500:]
    assert not marker.exists(), f"the repository's bwrap ran on the host (PATH entry {entry!r})"


def test_review_with_the_sandbox_off_never_runs_a_repositorys_git(daemon_env, workspace: Path, tmp_path: Path) -> None:
    """`/review` runs git without asking; with the sandbox `off` it runs on the host, so the
    git it runs must be the user's, never `./node_modules/.bin/git`."""
    import subprocess
    import sys

    marker = tmp_path / "ran-outside"
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    subprocess.run(["git", "add", "-A"], cwd=workspace, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], cwd=workspace, check=True
    )
    (workspace / "README.md").write_text("changed\n")
    planted = workspace / "node_modules" / ".bin"
    planted.mkdir(parents=True)
    (planted / "git").write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    (planted / "git").chmod(0o755)
    script = tmp_path / "review.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {
                        "when": {"user": "(?s)Review the uncommitted.*<diff>.*\\+changed"},
                        "text": "REVIEWED the change.",
                    },
                    {"text": "NOT A REVIEW"},
                ]
            }
        )
    )
    env = {**daemon_env, "TETHER_SANDBOX": "off", "PATH": f"./node_modules/.bin:{os.environ['PATH']}"}
    done = subprocess.run(
        [sys.executable, "-m", "tether", "run", "/review", "--provider", "scripted", "--script", str(script)],
        env=env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert not marker.exists(), "the repository's git ran on the host"
    assert "REVIEWED the change." in done.stdout, (done.stdout, done.stderr)
