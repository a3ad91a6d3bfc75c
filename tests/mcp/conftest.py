"""The MCP tests' fixture: the reference server, installed once."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

import pytest
from mcp_harness import EVERYTHING, HERE

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(scope="session")
def everything() -> Path:
    """The reference server, installed by tests/install-deps (installed here when missing)."""
    if not EVERYTHING.exists():
        subprocess.run(["sh", str(HERE / "install-server-everything")], check=True)
    return EVERYTHING
