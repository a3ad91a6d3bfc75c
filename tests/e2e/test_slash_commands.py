"""Slash commands through the real daemon as a user runs them: `tether run "/review"`."""

from __future__ import annotations

import json
import subprocess
import sys
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
        env=daemon_env, cwd=workspace, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "REVIEWED: returns 43 now." in done.stdout and "NOT A REVIEW" not in done.stdout
