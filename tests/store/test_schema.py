"""Connection settings, schema versioning and the migration loop."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import aiosqlite
import pytest

from tether.store import HistoryStore, StorageFault, StoreError, latest_version, schema

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import OldDatabase

Query = Callable[..., list[Any]]
LATEST = latest_version()  # 11: v1 history, v2 approval rules, v3 turn checkpoints, v4 search, v5 index in Python, v6 CHECKs without IN lists, v7 CJK words, v8 checkpoints, v9 prompt queue, v10 rules' network, v11 prompt keys
ALL = list(range(1, LATEST + 1))


async def test_wal_mode_and_version_are_recorded(store: HistoryStore, query: Query) -> None:
    assert query("PRAGMA journal_mode") == [("wal",)]
    assert [row[0] for row in query("SELECT version FROM schema_version")] == ALL
    assert store.schema_version == LATEST == 12
    assert {row[0] for row in query("SELECT name FROM sqlite_master WHERE type = 'table'")} >= {
        "schema_version",
        "sessions",
        "turns",
        "messages",
        "run_reports",
        "approval_rules",
    }


async def test_reopening_is_idempotent(db_path: Path, query: Query) -> None:
    for round_ in range(3):
        async with await HistoryStore.open(db_path) as store:
            await store.create_session(f"s{round_}", "/w", "code")
            assert store.schema_version == LATEST
    assert [row[0] for row in query("SELECT version FROM schema_version")] == ALL
    assert query("SELECT COUNT(*) FROM sessions") == [(3,)]


async def test_a_newer_database_is_refused(db_path: Path, query: Query) -> None:
    await (await HistoryStore.open(db_path)).close()
    query(f"INSERT INTO schema_version (version, applied_at) VALUES ({LATEST + 1}, 0)")

    with pytest.raises(StoreError) as caught:
        await HistoryStore.open(db_path)

    assert str(caught.value) == (
        f"history database {db_path} has schema version {LATEST + 1}, "
        f"this tether understands up to {LATEST}; upgrade tether"
    )


async def test_a_file_that_is_not_sqlite_is_a_storage_fault_naming_it(db_path: Path) -> None:
    db_path.write_bytes(b"definitely not a database" * 100)
    with pytest.raises(StorageFault) as caught:
        await HistoryStore.open(db_path)
    assert str(caught.value).startswith(f"file is not a database: {db_path} (")
    assert caught.value.path == str(db_path)


async def test_an_appended_migration_upgrades_an_old_database_exactly_once(
    monkeypatch: pytest.MonkeyPatch, db_path: Path, query: Query
) -> None:
    async with await HistoryStore.open(db_path) as store:  # a current database with data
        await store.create_session("old", "/w", "code", title="kept")
    calls: list[int] = []

    async def add_pinned(conn: aiosqlite.Connection) -> None:
        calls.append(1)
        await conn.execute("ALTER TABLE sessions ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0")

    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, add_pinned])
    for _ in range(2):
        async with await HistoryStore.open(db_path) as store:
            assert store.schema_version == LATEST + 1
            session = await store.get_session("old")
            assert session is not None and session.title == "kept"

    assert calls == [1]
    assert [row[0] for row in query("SELECT version FROM schema_version ORDER BY version")] == [*ALL, LATEST + 1]
    assert query("SELECT pinned FROM sessions") == [(0,)]

    monkeypatch.undo()  # the older code now meets the newer database
    with pytest.raises(StoreError, match=f"has schema version {LATEST + 1}, this tether understands up to {LATEST}"):
        await HistoryStore.open(db_path)


async def test_a_fresh_database_runs_every_migration_in_order(monkeypatch: pytest.MonkeyPatch, db_path: Path) -> None:
    order: list[str] = []

    def recorder(name: str) -> schema.Migration:
        async def migration(conn: aiosqlite.Connection) -> None:
            # each migration sees the previous one's work
            order.append(name)
            await conn.execute(f"CREATE TABLE extra_{name} (x)")

        return migration

    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, recorder("a"), recorder("b")])
    async with await HistoryStore.open(db_path) as store:
        assert store.schema_version == LATEST + 2
    assert order == ["a", "b"]


async def test_a_failing_migration_rolls_back_and_leaves_the_old_version(
    monkeypatch: pytest.MonkeyPatch, db_path: Path, query: Query
) -> None:
    await (await HistoryStore.open(db_path)).close()

    async def half_done(conn: aiosqlite.Connection) -> None:
        await conn.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, half_done])
    with pytest.raises(StoreError, match=f"migration to schema version {LATEST + 1} failed: disk on fire"):
        await HistoryStore.open(db_path)

    assert [row[0] for row in query("SELECT version FROM schema_version")] == ALL
    assert query("SELECT name FROM sqlite_master WHERE name = 'half_done'") == []
    monkeypatch.undo()
    async with await HistoryStore.open(db_path) as store:
        assert store.schema_version == LATEST


async def test_a_version_1_database_is_migrated_to_the_current_schema(db_path: Path, query: Query) -> None:
    """Every earlier schema version upgrades with its data intact (here: v1 -> v2)."""
    conn = await aiosqlite.connect(db_path)
    await schema.configure(conn)
    await conn.execute(schema._VERSION_TABLE)
    await conn.execute("BEGIN IMMEDIATE")
    await schema.MIGRATIONS[0](conn)
    await conn.execute("INSERT INTO schema_version (version, applied_at) VALUES (1, 0)")
    await conn.execute(
        "INSERT INTO sessions (id, workspace, title, mode, created_at, updated_at) "
        "VALUES ('s1', '/w', 'old title', 'ask', 1, 1)"
    )
    await conn.execute("COMMIT")
    await conn.close()

    async with await HistoryStore.open(db_path) as store:
        assert store.schema_version == LATEST
        session = await store.get_session("s1")
        assert session is not None and session.title == "old title"
        rule = await store.rules.add("execute", "npm test", "allow")
        assert [r.pattern for r in await store.rules.list()] == ["npm test"]
        assert await store.rules.delete(rule.id) and await store.rules.list() == []


async def test_a_rule_stored_before_v10_reads_as_granted_without_network(
    db_path: Path, query: Query, old_database: OldDatabase
) -> None:
    """v10 gives each rule the network it was granted under; a rule an older Tether stored
    said nothing about it and keeps working, read the strictest way ("off"). Granting the
    same rule again takes the newer answer's condition."""
    await old_database(9, [])
    query(
        "INSERT INTO approval_rules (tool_kind, pattern, decision, created_at) VALUES ('execute', 'make', 'allow', 1)"
    )
    async with await HistoryStore.open(db_path) as store:
        assert store.schema_version == LATEST
        (old,) = await store.rules.list()
        assert (old.pattern, old.network) == ("make", "off")
        again = await store.rules.add("execute", "make", "allow", "allowlist example.test")
        await store.rules.add("execute", "npm test", "allow", "on")
        assert again.id == old.id
        assert [(r.pattern, r.network) for r in await store.rules.list()] == [
            ("make", "allowlist example.test"),
            ("npm test", "on"),
        ]


@pytest.mark.parametrize("version", [0, *ALL[:-1]])
async def test_every_schema_keeps_refusing_unknown_roles_and_statuses(
    version: int, db_path: Path, query: Query, old_database: OldDatabase
) -> None:
    """v6 spells the CHECKs of roles and statuses as OR chains (faster to evaluate):
    from every earlier version, and on a new database, they refuse and accept as before."""
    if version:
        await old_database(version, [("user", '{"role":"user","content":[]}')])
    async with await HistoryStore.open(db_path) as store:
        assert store.schema_version == LATEST
    if not version:
        query("INSERT INTO sessions (id, workspace, mode, created_at, updated_at) VALUES ('old', '/w', 'ask', 1, 1)")
        query("INSERT INTO turns (id, session_id, seq, status, started_at) VALUES ('t', 'old', 1, 'complete', 1)")
    insert_message = "INSERT INTO messages (session_id, turn_id, seq, role, body, status, created_at) VALUES ('old', 't', ?, ?, '{}', ?, 1)"
    for seq, (role, status) in enumerate(
        [("robot", "complete"), ("user", "done"), ("USER", "complete"), ("user", None)], 10
    ):
        with pytest.raises(sqlite3.IntegrityError):
            query(insert_message, (seq, role, status))
    for seq, role in enumerate(("user", "assistant", "tool", "system"), 20):
        for status in ("complete", "incomplete", "cancelled", "interrupted", "error"):
            query(insert_message, (seq, role, status))
            query("DELETE FROM messages WHERE seq = ?", (seq,))
    insert_turn = "INSERT INTO turns (id, session_id, seq, status, started_at) VALUES (?, 'old', ?, ?, 1)"
    with pytest.raises(sqlite3.IntegrityError):
        query(insert_turn, ("t-bad", 5, "paused"))
    for seq, status in enumerate(("running", "complete", "cancelled", "interrupted", "error"), 6):
        query(insert_turn, (f"t{seq}", seq, status))
    assert query("PRAGMA integrity_check") == [("ok",)]
    assert query("SELECT count(*) FROM messages WHERE session_id = 'old' AND seq < 10") == [(1 if version else 0,)]
    tables = dict(query("SELECT name, sql FROM sqlite_master WHERE name IN ('messages', 'turns')"))
    assert " IN (" not in tables["messages"] + tables["turns"]


async def test_where_sqlite_refuses_schema_edits_v6_keeps_the_in_lists(db_path: Path, query: Query) -> None:
    """A SQLite built in defensive mode refuses writes to sqlite_master: v6 then leaves
    the tables as they are (same rows accepted, only slower) instead of failing the open."""
    conn = await aiosqlite.connect(db_path, isolation_level=None)
    await schema.configure(conn)
    await conn.execute("BEGIN IMMEDIATE")
    for migration in schema.MIGRATIONS[:5]:
        await migration(conn)
    real_execute = conn.execute

    def defensive_execute(sql: str, *args: Any):
        if sql.startswith("UPDATE sqlite_master"):
            raise sqlite3.OperationalError("table sqlite_master may not be modified")
        return real_execute(sql, *args)

    conn.execute = defensive_execute  # type: ignore[method-assign]
    await schema.MIGRATIONS[5](conn)
    conn.execute = real_execute  # type: ignore[method-assign]
    await conn.execute("COMMIT")
    assert list(await conn.execute_fetchall("PRAGMA writable_schema")) == [(0,)]
    await conn.close()
    tables = dict(query("SELECT name, sql FROM sqlite_master WHERE name IN ('messages', 'turns')"))
    assert "CHECK (role IN ('user', 'assistant', 'tool', 'system'))" in tables["messages"]
    assert query("PRAGMA integrity_check") == [("ok",)]
