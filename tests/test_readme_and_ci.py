"""The README's two set-up lines are exactly what CI runs."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_readme_setup_lines_are_the_ci_commands():
    readme = (REPO / "README.md").read_text()
    block = re.search(r"## Set up\s+```sh\n(.*?)```", readme, re.S)
    assert block, "README.md needs a '## Set up' section with one sh block"
    lines = [line for line in block.group(1).splitlines() if line.strip()]
    assert len(lines) == 2, lines
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    for line in lines:
        assert line.strip() in ci, f"{line!r} is not run by .ci/run"
    assert "tether demo" in lines[0] and "pytest" in lines[1]


def test_the_dependency_installer_covers_the_sandbox_and_chromium():
    """CI installs bubblewrap (the command sandbox) the way it installs Chromium."""
    readme = (REPO / "README.md").read_text()
    assert "sh tests/install-deps && " in readme
    script = (REPO / "tests" / "install-deps").read_text()
    assert "bubblewrap" in script and "command -v bwrap" in script and "chromium" in script
