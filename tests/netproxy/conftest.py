"""The `registry_namespace` fixture (netns_registry.py): a command line run in a network
namespace the test makes, with the stand-in registry up."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from netns_registry import namespaced

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def registry_namespace(tmp_path: Path):
    return lambda command, tls=None: namespaced(tmp_path, command, tls)
