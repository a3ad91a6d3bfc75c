"""The `registry_namespace` fixture (netns_registry.py): a command line run in a network
namespace the test makes, with the stand-in registry up."""

from __future__ import annotations

from pathlib import Path

import pytest
from netns_registry import namespaced


@pytest.fixture
def registry_namespace(tmp_path: Path):
    return lambda command, tls=None: namespaced(tmp_path, command, tls)
