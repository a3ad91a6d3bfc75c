"""The history database's migration steps, one function per schema version, and their order.

Owns: what each version adds (``MIGRATIONS[i]`` takes the database from version *i* to *i + 1*;
``_v1_initial`` is the first) and ``MIGRATIONS``, their one list: a new version is a step
appended here. Must not: run a step (``schema.py`` does), read or write history rows, or ever
rewrite or reorder a step that has shipped.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable

import aiosqlite

from tether.store.records import split_cjk

__all__ = ["MIGRATIONS", "Migration"]

Migration = Callable[[aiosqlite.Connection], Awaitable[None]]


_V1_STATEMENTS = (
    """
    CREATE TABLE sessions (
        id         TEXT PRIMARY KEY,
        workspace  TEXT NOT NULL,
        title      TEXT,
        mode       TEXT NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        metadata   TEXT NOT NULL DEFAULT '{}'
    )""",
    # (updated_at, id) is the paging key of list_sessions, newest first
    "CREATE INDEX sessions_by_updated ON sessions (updated_at, id)",
    """
    CREATE TABLE turns (
        id          TEXT PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq         INTEGER NOT NULL,
        status      TEXT NOT NULL
                    CHECK (status IN ('running', 'complete', 'cancelled', 'interrupted', 'error')),
        stop_reason TEXT,
        started_at  REAL NOT NULL,
        finished_at REAL,
        error       TEXT,
        UNIQUE (session_id, seq)
    )""",
    # crash recovery looks only for running turns; a partial index keeps that free
    "CREATE INDEX turns_running ON turns (status) WHERE status = 'running'",
    """
    CREATE TABLE messages (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        turn_id    TEXT REFERENCES turns (id) ON DELETE CASCADE,
        seq        INTEGER NOT NULL,
        role       TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
        body       TEXT NOT NULL,
        status     TEXT NOT NULL DEFAULT 'complete'
                   CHECK (status IN ('complete', 'incomplete', 'cancelled', 'interrupted', 'error')),
        created_at REAL NOT NULL,
        UNIQUE (session_id, seq)
    )""",
    # without it every cascaded turn delete would scan all messages
    "CREATE INDEX messages_by_turn ON messages (turn_id)",
    """
    CREATE TABLE run_reports (
        turn_id    TEXT PRIMARY KEY REFERENCES turns (id) ON DELETE CASCADE,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        report     TEXT NOT NULL,
        created_at REAL NOT NULL
    )""",
    "CREATE INDEX run_reports_by_session ON run_reports (session_id)",
)


async def _v1_initial(conn: aiosqlite.Connection) -> None:
    # statement by statement, not executescript(): executescript COMMITs first,
    # which would break the one-transaction-per-migration guarantee
    for statement in _V1_STATEMENTS:
        await conn.execute(statement)


async def _v2_approval_rules(conn: aiosqlite.Connection) -> None:
    # "Always" answers and user-made rules of the approval gate, per workspace (the
    # database is the workspace's). `pattern` is a command prefix or a path glob.
    await conn.execute(
        """
        CREATE TABLE approval_rules (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            tool_kind  TEXT NOT NULL,
            pattern    TEXT NOT NULL,
            decision   TEXT NOT NULL CHECK (decision IN ('allow', 'deny')),
            created_at REAL NOT NULL,
            UNIQUE (tool_kind, pattern, decision)
        )"""
    )


async def _v3_turn_checkpoints(conn: aiosqlite.Connection) -> None:
    # owner: "pid:start" of the daemon running the turn (recovery spares live owners);
    # pending: the tool calls of a step waiting for approval (restart-safe approvals);
    # partial: the streamed output of the step in flight, saved every ~0.5 s.
    for column in ("owner", "pending", "partial"):
        await conn.execute(f"ALTER TABLE turns ADD COLUMN {column} TEXT")


# The searchable text of one message row (`{row}` is NEW, OLD or messages): the text
# blocks of a user message, an assistant's answer, a tool result's content. Thinking,
# tool arguments and system messages are not indexed. (Since v5 the store computes the
# same text in Python: `records.searchable_text`.)
_V4_SEARCH_TEXT = """CASE {row}.role
    WHEN 'user' THEN (
        SELECT group_concat(json_extract(block.value, '$.text'), char(10))
        FROM json_each({row}.body, '$.content') AS block
        WHERE json_extract(block.value, '$.type') = 'text'
          AND json_type(block.value, '$.text') = 'text')
    WHEN 'assistant' THEN CASE WHEN json_type({row}.body, '$.text') = 'text'
        THEN json_extract({row}.body, '$.text') END
    WHEN 'tool' THEN CASE WHEN json_type({row}.body, '$.content') = 'text'
        THEN json_extract({row}.body, '$.content') END
END"""


async def _v4_search(conn: aiosqlite.Connection) -> None:
    # Full-text search over messages. The FTS table keeps its own copy of the text
    # (snippet() needs it); rowid = messages.id. Triggers keep it in sync with every
    # insert path (steps, recovery, imports) and with deletes, including the cascade
    # of a session delete. Bodies are immutable, so there is no UPDATE trigger.
    await conn.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(text, tokenize = 'unicode61 remove_diacritics 2')")
    await conn.execute(
        f"""
        CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
        WHEN NEW.role IN ('user', 'assistant', 'tool') AND json_valid(NEW.body)
        BEGIN
            INSERT INTO messages_fts (rowid, text)
            SELECT NEW.id, found.text FROM (SELECT {_V4_SEARCH_TEXT.format(row="NEW")} AS text) AS found
            WHERE found.text IS NOT NULL AND found.text != '';
        END"""
    )
    await conn.execute(
        """
        CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
        BEGIN
            DELETE FROM messages_fts WHERE rowid = OLD.id;
        END"""
    )
    # index the history written before this version
    await conn.execute(
        f"""
        INSERT INTO messages_fts (rowid, text)
        SELECT found.id, found.text FROM (
            SELECT messages.id AS id, {_V4_SEARCH_TEXT.format(row="messages")} AS text
            FROM messages
            WHERE messages.role IN ('user', 'assistant', 'tool') AND json_valid(messages.body)
        ) AS found
        WHERE found.text IS NOT NULL AND found.text != ''"""
    )


async def _v5_index_in_python(conn: aiosqlite.Connection) -> None:
    # The insert trigger of v4 ran SQL JSON functions on every stored message (half the
    # time of restoring a long session). The store now computes the searchable text in
    # Python (`records.searchable_text`, the same text) and writes the index rows itself
    # in the transaction that inserts the messages; the rows v4 indexed stay as they are.
    # The delete trigger stays.
    await conn.execute("DROP TRIGGER messages_fts_insert")


# The CHECKs of v1 as `=`/OR chains, which mean the same: SQLite evaluated each
# `IN (...)` list afresh for every row, a third of the time of inserting a restored
# session's messages (bench/RESULTS.md).
_V6_CHECKS = {
    "messages": (
        ("role", ("user", "assistant", "tool", "system")),
        ("status", ("complete", "incomplete", "cancelled", "interrupted", "error")),
    ),
    "turns": (("status", ("running", "complete", "cancelled", "interrupted", "error")),),
}


def _in_list(column: str, words: tuple[str, ...]) -> str:
    return f"CHECK ({column} IN (" + ", ".join(f"'{w}'" for w in words) + "))"


def _or_chain(column: str, words: tuple[str, ...]) -> str:
    return "CHECK (" + " OR ".join(f"{column} = '{w}'" for w in words) + ")"


async def _v6_checks_without_in_lists(conn: aiosqlite.Connection) -> None:
    # A constraint that accepts exactly the same rows changes nothing stored, so the
    # table definitions are edited in place (SQLite's documented procedure for changing
    # CHECK constraints: writable_schema, then a new schema_version), not rebuilt. Where
    # SQLite refuses (a build in defensive mode), the IN lists stay: same rows, slower.
    rows = await conn.execute_fetchall(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name IN ('messages', 'turns')"
    )
    edited = {}
    for name, sql in rows:
        for column, words in _V6_CHECKS[name]:
            sql = sql.replace(_in_list(column, words), _or_chain(column, words))
        edited[name] = sql
    ((version,),) = list(await conn.execute_fetchall("PRAGMA schema_version"))
    try:
        await conn.execute("PRAGMA writable_schema = ON")
        for name, sql in edited.items():
            await conn.execute("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?", (sql, name))
        await conn.execute(f"PRAGMA schema_version = {int(version) + 1}")
    except sqlite3.DatabaseError:
        return
    finally:
        await conn.execute("PRAGMA writable_schema = OFF")


async def _v7_cjk_words(conn: aiosqlite.Connection) -> None:
    # Index rows holding Chinese, Japanese or Korean text are written again with each
    # such character a token of its own (`records.split_cjk`; before, a run of them was
    # one token and a word inside it could not be found). The index keeps its own copy of
    # the text, so the messages themselves are not read.
    rows = await conn.execute_fetchall("SELECT rowid, text FROM messages_fts")
    split = ((split_cjk(text), text, rowid) for rowid, text in rows)
    await conn.executemany(
        "UPDATE messages_fts SET text = ? WHERE rowid = ?", [(new, rowid) for new, old, rowid in split if new != old]
    )


async def _v8_checkpoints(conn: aiosqlite.Connection) -> None:
    # What each tool call (and each rewind) changed in the workspace, with the contents
    # as deduplicated blobs, and the messages a rewind took out of the model's view.
    from tether.store.checkpoints import SCHEMA

    for statement in SCHEMA:
        await conn.execute(statement)


async def _v9_prompt_queue(conn: aiosqlite.Connection) -> None:
    # The prompts waiting for a running turn (`tether.store.queue`): a row from when it is
    # queued until its turn begins or it is withdrawn. `owner` is the process holding it;
    # a row whose owner died is reported as not run until withdrawn, never run later.
    await conn.execute(
        """
        CREATE TABLE prompt_queue (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            prompt TEXT NOT NULL,
            preview TEXT NOT NULL,
            queued_at REAL NOT NULL,
            owner TEXT NOT NULL
        )"""
    )
    await conn.execute("CREATE INDEX prompt_queue_session ON prompt_queue (session_id, queued_at)")


async def _v10_rule_network(conn: aiosqlite.Connection) -> None:
    # The network an "allow always" command rule was granted under ("off", "allowlist
    # DOMAIN...", "on"): it allows its commands only with no more than that. A rule stored
    # before this version said nothing, and is read as "off", the strictest.
    await conn.execute("ALTER TABLE approval_rules ADD COLUMN network TEXT NOT NULL DEFAULT 'off'")


async def _v11_prompt_keys(conn: aiosqlite.Connection) -> None:
    # Idempotency keys of prompts (`tether.store.prompt_keys`): the turn a key began,
    # written with the turn's first row, so a retry never inserts the prompt twice.
    await conn.execute(
        """
        CREATE TABLE prompt_keys (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            key TEXT NOT NULL,
            turn_id TEXT NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
            created_at REAL NOT NULL,
            PRIMARY KEY (session_id, key)
        )"""
    )


async def _v12_prompt_key_digests(conn: aiosqlite.Connection) -> None:
    # The digest of the prompt a key was first sent with (SPEC §12.5): the same key with
    # another prompt is refused, never answered as if it were a retry. A key stored before
    # this version has none ("") and is answered as before.
    await conn.execute("ALTER TABLE prompt_keys ADD COLUMN prompt_digest TEXT NOT NULL DEFAULT ''")


# The order the steps run in: migration *i* (from 1) takes the database from version *i* to *i + 1*.
MIGRATIONS: tuple[Migration, ...] = (
    _v1_initial,
    _v2_approval_rules,
    _v3_turn_checkpoints,
    _v4_search,
    _v5_index_in_python,
    _v6_checks_without_in_lists,
    _v7_cjk_words,
    _v8_checkpoints,
    _v9_prompt_queue,
    _v10_rule_network,
    _v11_prompt_keys,
    _v12_prompt_key_digests,
)
