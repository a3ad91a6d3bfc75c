"""The MCP tests' fixture: the reference server, installed once."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from mcp_harness import EVERYTHING, HERE


@pytest.fixture(scope="session")
def everything() -> Path:
    """The reference server, installed by tests/install-deps (installed here when missing)."""
    if not EVERYTHING.exists():
        subprocess.run(["sh", str(HERE / "install-server-everything")], check=True)
    return EVERYTHING
