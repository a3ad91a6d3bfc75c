"""Fixtures of the provider tests: no proxy or CA settings of the developer's shell, and
servers and providers closed at the end of a test (`stack`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loopback_server import Served

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR")


@pytest.fixture(autouse=True)
def no_proxy_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.fixture
async def stack() -> AsyncIterator[list[Any]]:
    """Servers and providers to close at the end."""
    held: list[Any] = []
    yield held
    for item in held:  # the providers first: their connections close, then the servers' handlers end
        if not isinstance(item, Served):
            await item.aclose()
    for item in held:
        if isinstance(item, Served):
            await item.aclose()
