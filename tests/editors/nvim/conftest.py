"""Fixtures for the Neovim plugin's tests: a child Neovim in the test workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvim_driver import Nvim


@pytest.fixture
def nvim_factory(workspace: Path, daemon_env: dict[str, str], tmp_path: Path):
    """Start child Neovims (cwd = the workspace, the daemon's test environment)."""
    started: list[Nvim] = []

    def start() -> Nvim:
        child = Nvim(workspace, daemon_env, tmp_path)
        started.append(child)
        return child

    yield start
    for child in started:
        child.close()


@pytest.fixture
def nvim(nvim_factory) -> Nvim:
    return nvim_factory()
