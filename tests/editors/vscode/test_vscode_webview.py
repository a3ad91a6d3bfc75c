"""The VS Code extension's chat webview in headless Chromium.

Each `editors/vscode/test/webview/*.test.mjs` runs as its own test (`node --test FILE`):
the test files build the webview themselves, serve it with its real Content-Security-Policy,
replay recorded daemon traffic into it and check what it renders and posts back.
Needs `npm ci --prefix editors/vscode` and Chromium (`tests/install-deps`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

EDITOR = Path(__file__).resolve().parents[3] / "editors" / "vscode"
TEST_FILES = sorted((EDITOR / "test" / "webview").glob("*.test.mjs"))


def _chromium() -> str:
    found = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "no Chromium: run tests/install-deps or set CHROMIUM"
    return found


def test_there_are_webview_tests() -> None:
    assert {p.name for p in TEST_FILES} >= {"chat.test.mjs", "approvals.test.mjs", "sessions.test.mjs"}


@pytest.mark.parametrize("test_file", TEST_FILES, ids=[p.name for p in TEST_FILES])
def test_webview(test_file: Path) -> None:
    node = shutil.which("node")
    assert node, "node is not on PATH"
    assert (EDITOR / "node_modules" / "playwright-core").is_dir(), "run: npm ci --prefix editors/vscode"
    result = subprocess.run(
        [node, "--test", "--test-reporter=spec", str(test_file.relative_to(EDITOR))],
        cwd=EDITOR,
        env={**os.environ, "CHROMIUM": _chromium()},
        capture_output=True,
        text=True,
        timeout=55,
    )
    assert result.returncode == 0, f"{test_file.name} failed:\n{result.stdout}\n{result.stderr}"
