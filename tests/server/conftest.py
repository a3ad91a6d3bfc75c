"""Fixtures of the in-process handler tests (the harness is `server_harness.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from server_harness import settings_for

from tether.config import Settings


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return settings_for(tmp_path)
