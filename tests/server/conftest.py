"""Fixtures of the in-process handler tests (the harness is `server_harness.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from server_harness import settings_for

if TYPE_CHECKING:
    from pathlib import Path

    from tether.config import Settings


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return settings_for(tmp_path)
