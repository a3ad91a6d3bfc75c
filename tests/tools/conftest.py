"""Fixtures for the workspace tool tests: a real temporary workspace and a sibling
directory outside it (for escape attempts)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import pytest

from tether.tools.base import ToolContext
from tether.tools.sandbox import WorkspaceSandbox

if TYPE_CHECKING:
    from pathlib import Path

WriteFiles = Callable[[Mapping[str, str | bytes]], None]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    elsewhere = tmp_path / "outside"
    elsewhere.mkdir()
    (elsewhere / "secret.txt").write_text("password = hunter2\n")
    return elsewhere


@pytest.fixture
def write(root: Path) -> WriteFiles:
    """Create files under the workspace: {"src/a.py": "text" or b"bytes"}."""

    def _write(files: Mapping[str, str | bytes]) -> None:
        for rel, content in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8", newline="")

    return _write


@pytest.fixture
def sandbox(root: Path) -> WorkspaceSandbox:
    return WorkspaceSandbox(root)


@pytest.fixture
def ctx(sandbox: WorkspaceSandbox) -> ToolContext:
    return ToolContext(sandbox=sandbox, call_id="test-call")
