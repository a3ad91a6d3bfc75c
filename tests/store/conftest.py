"""Fixtures for the history store tests: real SQLite files under tmp_path, no mocks."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tether.store import HistoryStore

Query = Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "history.sqlite3"


@pytest.fixture
async def store(db_path: Path) -> AsyncIterator[HistoryStore]:
    async with await HistoryStore.open(db_path) as opened:
        yield opened


@pytest.fixture
def query(db_path: Path) -> Query:
    """Run one statement on a separate plain sqlite3 connection, as an outside observer."""

    def run(sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with closing(sqlite3.connect(db_path)) as conn, conn:
            return conn.execute(sql, params).fetchall()

    return run
