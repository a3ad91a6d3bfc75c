"""Fixtures for the Neovim plugin's tests: a child Neovim in the test workspace."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from nvim_driver import Nvim

if TYPE_CHECKING:
    from pathlib import Path

# What the plugin negotiated with each daemon it started (`initialize`'s answer).
NEGOTIATED = """
local versions = {}
for _, client in pairs(require("tether.client").clients) do
  if client.info then table.insert(versions, client.info.protocolVersion) end
end
return versions
"""


@pytest.fixture
def acp_version() -> int:
    """The ACP version the test daemon offers: 2 (the default), or 1 from a v1-only daemon
    (`TETHER_ACP_V2=off`); modules parametrize it to run their flows on both."""
    return 2


@pytest.fixture
def nvim_factory(workspace: Path, daemon_env: dict[str, str], tmp_path: Path, acp_version: int):
    """Start child Neovims (cwd = the workspace, the daemon's test environment). Each one's
    daemons must have answered in `acp_version` (checked as the test ends)."""
    started: list[Nvim] = []
    env = {**daemon_env, "TETHER_ACP_V2": "on" if acp_version == 2 else "off"}

    def start() -> Nvim:
        child = Nvim(workspace, env, tmp_path)
        started.append(child)
        return child

    yield start
    negotiated = [version for child in started if not child.closed for version in child.lua(NEGOTIATED)]
    for child in started:
        child.close()
    assert set(negotiated) <= {acp_version}, f"the plugin spoke ACP {negotiated}, not {acp_version}"


@pytest.fixture
def nvim(nvim_factory) -> Nvim:
    return nvim_factory()
