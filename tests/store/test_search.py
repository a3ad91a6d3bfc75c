"""Full-text search (schema v4, indexed by the store since v5): what is indexed, ranking,
snippets, deletes, old databases."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.store import HistoryStore, MessageRecord, export_session, import_session, latest_version, migrations
from tether.store.records import searchable_text
from tether.store.search import Hit, literal_query, search
from tether_protocol.conversation import AssistantMessage

if TYPE_CHECKING:
    from pathlib import Path

    from .conftest import OldDatabase

Query = Callable[..., list[Any]]


def _user(text: str, *more: dict[str, Any]) -> MessageRecord:
    return MessageRecord("user", {"role": "user", "content": [{"type": "text", "text": text}, *more]})


async def _conversation(store: HistoryStore, sid: str, title: str, user: str, answer: str, tool: str) -> None:
    await store.create_session(sid, "/w", "ask", title=title)
    tid = f"{sid}-t1"
    await store.begin_turn(sid, tid, _user(user, {"type": "image", "data": "zebra", "mimeType": "image/png"}))
    await store.append_messages(
        sid,
        tid,
        [
            MessageRecord(
                "assistant",
                {
                    "role": "assistant",
                    "text": answer,
                    "thinking": "private giraffe thoughts",
                    "tool_calls": [{"id": "c1", "name": "grep", "arguments": {"pattern": "okapi"}}],
                },
            ),
            MessageRecord("tool", {"role": "tool", "tool_call_id": "c1", "name": "grep", "content": tool}),
            MessageRecord("system", {"role": "system", "content": "system walrus"}),
        ],
    )
    await store.finish_turn(tid, "complete", "end_turn")


async def test_user_text_assistant_text_and_tool_results_are_found(store: HistoryStore) -> None:
    await _conversation(
        store,
        "s1",
        "Parser work",
        "Why does the parser crash?",
        "The parser crashes on empty input.",
        "src/parser.py:12: def parse(text):",
    )
    await _conversation(
        store, "s2", "Docs", "Update the README", "Done, the README mentions the parser.", "README.md updated"
    )

    hits = await search(store, "parser")
    assert {(h.session_id, h.message_seq, h.role) for h in hits} == {
        ("s1", 0, "user"),
        ("s1", 1, "assistant"),
        ("s1", 2, "tool"),
        ("s2", 1, "assistant"),
    }
    assert all(isinstance(h, Hit) and "[[parser]]" in h.snippet.lower() for h in hits)
    assert [h.rank for h in hits] == sorted(h.rank for h in hits)  # bm25: best (lowest) first
    assert {h.session_title for h in hits} == {"Parser work", "Docs"}

    (hit,) = await search(store, "crashes")
    assert (hit.session_id, hit.message_seq, hit.snippet) == ("s1", 1, "The parser [[crashes]] on empty input.")
    # thinking, tool arguments, non-text blocks and system messages are not indexed
    for word in ("giraffe", "okapi", "zebra", "walrus"):
        assert await search(store, word) == []


async def test_fts_syntax_and_limits(store: HistoryStore) -> None:
    await _conversation(
        store, "s1", "t", "run npm test please", "Running npm test: all 12 passed", "PASS  src/app.test.js"
    )
    assert len(await search(store, "npm AND passed")) == 1
    assert len(await search(store, "pass*")) == 2  # prefix query
    assert len(await search(store, '"npm test"')) == 2
    assert len(await search(store, "npm", limit=1)) == 1
    # not valid FTS5: searched as literal words instead of failing
    assert len(await search(store, '"npm')) == 2
    assert len(await search(store, "npm:test")) == 2
    assert len(await search(store, "AND")) == 0
    assert len(await search(store, "app.test.js")) == 1
    assert await search(store, "   ") == []
    # a NUL (which no indexed text holds) separates words, as a space would
    assert await search(store, "\0") == []
    assert len(await search(store, "\0npm\0test")) == 2
    assert len(await search(store, '"npm\0')) == 2
    with pytest.raises(ValueError, match="limit must be between 1 and 200"):
        await search(store, "npm", limit=0)


def test_literal_query_quotes_every_word() -> None:
    assert literal_query('say "hi" now:') == '"say" """hi""" "now:"'


async def test_unicode_and_diacritics(store: HistoryStore) -> None:
    await _conversation(store, "s1", "t", "Ça marche très bien", "日本語 テキスト", "Grüße")
    assert [h.message_seq for h in await search(store, "tres")] == [0]
    assert [h.message_seq for h in await search(store, "grusse")] == []
    assert [h.message_seq for h in await search(store, "grüße")] == [2]
    assert [h.message_seq for h in await search(store, "日本語")] == [1]


async def test_deleting_a_session_removes_its_index_rows(store: HistoryStore, query: Query) -> None:
    await _conversation(store, "s1", "t", "alpha", "beta", "gamma")
    await _conversation(store, "s2", "t", "alpha", "delta", "epsilon")
    assert query("SELECT COUNT(*) FROM messages_fts") == [(6,)]
    assert await store.delete_session("s1")
    assert query("SELECT COUNT(*) FROM messages_fts") == [(3,)]
    assert [h.session_id for h in await search(store, "alpha")] == ["s2"]
    assert await search(store, "beta") == []


async def test_imported_and_recovered_messages_are_indexed(db_path: Path, query: Query) -> None:
    async with await HistoryStore.open(db_path) as store:
        await _conversation(store, "s1", "t", "alpha", "beta", "gamma")
        copy_id = await import_session(store, await export_session(store, "s1"))
        await store.begin_turn("s1", "t2", _user("crash soon"))
        await store.save_partial("t2", AssistantMessage("half an answer about kiwis"))
    # a daemon that died mid-stream: the next open commits the partial output
    query("UPDATE turns SET owner = NULL WHERE id = 't2'")
    async with await HistoryStore.open(db_path, recover=False) as store:
        assert await search(store, "kiwis") == []
    async with await HistoryStore.open(db_path) as store:
        assert store.recovered_turns == 1
        assert {h.session_id for h in await search(store, "beta")} == {"s1", copy_id}
        (hit,) = await search(store, "kiwis")
        assert (hit.session_id, hit.role) == ("s1", "assistant")


async def test_a_version_3_database_is_indexed_when_opened(
    db_path: Path, query: Query, old_database: OldDatabase
) -> None:
    """History written before search existed becomes searchable on the first open."""
    await old_database(
        3,
        [
            ("user", '{"role":"user","content":[{"type":"text","text":"where is the flamingo"}]}'),
            ("assistant", '{"role":"assistant","text":"The flamingo is in zoo.py"}'),
            ("tool", '{"role":"tool","tool_call_id":"c","content":"flamingo = Bird()"}'),
            ("assistant", '{"role":"assistant","text":"","tool_calls":[]}'),
            ("user", "not json at all"),
        ],
    )
    assert "messages_fts" not in {row[0] for row in query("SELECT name FROM sqlite_master")}

    async with await HistoryStore.open(db_path) as store:
        assert store.schema_version == latest_version()
        hits = await search(store, "flamingo")
    assert sorted((h.message_seq, h.role, h.session_title) for h in hits) == [
        (0, "user", "Old talk"),
        (1, "assistant", "Old talk"),
        (2, "tool", "Old talk"),
    ]
    assert query("SELECT COUNT(*) FROM messages_fts") == [(3,)]


# -- schema v5: the searchable text is computed in Python ----------------------------

_word = st.text(st.sampled_from('ab \0\n\té"\\'), max_size=8) | st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12
)
_scalar = st.none() | st.booleans() | st.integers(-5, 5) | _word
_text_block = st.fixed_dictionaries({"type": st.just("text"), "text": _word})
_block = st.one_of(
    _text_block,
    st.fixed_dictionaries({"text": _word, "type": st.just("text")}),  # keys in the other order
    st.fixed_dictionaries({"type": st.sampled_from(["text", "image", "Text"]), "text": _scalar}),
    st.fixed_dictionaries({"type": st.just("text")}),
    st.dictionaries(_word, _scalar, max_size=2),
    st.lists(_scalar, max_size=2),
    _scalar,
)
_message = st.one_of(
    st.tuples(
        st.just("user"),
        st.fixed_dictionaries(
            {"role": st.just("user")},
            optional={
                "content": st.lists(st.one_of(_text_block, _block), max_size=4)
                | st.dictionaries(_word, _block, max_size=2)
                | _scalar,
            },
        ),
    ),
    st.tuples(
        st.sampled_from(["user", "assistant", "tool", "system"]),
        st.fixed_dictionaries({}, optional={"text": _scalar, "content": _scalar, "thinking": _word}),
    ),
)


def _v4_text(role: str, body: str) -> str | None:
    """What the v4 trigger indexed: its SQL, run on an in-memory database."""
    with contextlib.closing(sqlite3.connect(":memory:")) as conn:
        (text,) = conn.execute(
            f"SELECT {migrations._V4_SEARCH_TEXT.format(row='m')} FROM (SELECT ? AS role, ? AS body) AS m",
            (role, body),
        ).fetchone()
    return text or None


@settings(max_examples=300, deadline=None)
@given(message=_message)
def test_the_indexed_text_is_what_schema_v4_indexed(message: tuple[str, dict[str, Any]]) -> None:
    role, body = message
    encoded = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    try:
        expected = _v4_text(role, encoded)
    except sqlite3.OperationalError:
        # v4 refused to store a user message with a content entry that is not an object
        # (SQL's json_extract on a bare string): v5 stores it and indexes its text blocks
        assert role == "user"
        content = body["content"]
        entries = list(content.values()) if isinstance(content, dict) else content
        entries = entries if isinstance(entries, list) else [entries]
        assert any(isinstance(e, str) for e in entries)
        expected = (
            "\n".join(
                e["text"]
                for e in entries
                if isinstance(e, dict) and e.get("type") == "text" and isinstance(e.get("text"), str)
            )
            or None
        )
        if expected is not None and "\0" in expected:
            return  # v4 had no text to compare with; the NUL rule is checked above
    assert searchable_text(role, body) == expected


async def test_a_version_4_database_keeps_its_index_and_indexes_what_is_added(
    db_path: Path, query: Query, old_database: OldDatabase
) -> None:
    """History indexed by v4's trigger stays found; what v5 adds is indexed once, by Python."""
    await old_database(
        4,
        [
            ("user", '{"role":"user","content":[{"type":"text","text":"where is the heron"}]}'),
            ("assistant", '{"role":"assistant","text":"The heron is in pond.py"}'),
        ],
    )
    assert query("SELECT COUNT(*) FROM messages_fts") == [(2,)]  # the v4 trigger's rows

    async with await HistoryStore.open(db_path) as store:
        assert store.schema_version == latest_version() == 12
        assert [h.message_seq for h in await search(store, "heron")] == [0, 1]
        await _conversation(store, "new", "New talk", "any heron here?", "one heron", "heron.txt")
        copy_id = await import_session(store, await export_session(store, "old"))
        await store.begin_turn("new", "t2", _user("crash soon"))
        await store.save_partial("t2", AssistantMessage("a heron, half"))
    query("UPDATE turns SET owner = NULL WHERE id = 't2'")
    async with await HistoryStore.open(db_path) as store:  # recovers t2's partial output
        assert store.recovered_turns == 1
        hits = await search(store, "heron", limit=50)
        assert sorted((h.session_id, h.message_seq) for h in hits) == sorted(
            [
                ("old", 0),
                ("old", 1),
                (copy_id, 0),
                (copy_id, 1),
                ("new", 0),
                ("new", 1),
                ("new", 2),
                ("new", 5),
            ]
        )
        # one index row per indexed message, none left behind by a delete
        assert query("SELECT COUNT(*) FROM messages_fts") == [(len(hits) + 1,)]  # + "crash soon"
        assert await store.delete_session("old")
        assert query("SELECT COUNT(*) FROM messages_fts") == [(len(hits) - 1,)]
        assert {h.session_id for h in await search(store, "heron", limit=50)} == {copy_id, "new"}


async def test_a_lone_surrogate_made_inside_is_stored_and_found_as_the_replacement_character(
    store: HistoryStore,
) -> None:
    """A model reply a provider decoded with ``json.loads`` or a file name decoded with
    "surrogateescape" can hold one; SQLite refuses to bind such text, which broke the turn."""
    await _conversation(store, "s1", "t", "list the files", "Found bad\udcff.txt and more", "bad\udcff.txt\nokay.txt")
    hits = await search(store, "bad")
    assert {(h.role, h.snippet) for h in hits} == {
        ("assistant", "Found [[bad]]\ufffd.txt and more"),
        ("tool", "[[bad]]\ufffd.txt\nokay.txt"),
    }


async def test_a_word_inside_chinese_japanese_or_korean_text_is_found(store: HistoryStore) -> None:
    """They are written without spaces between words: the tokenizer read a whole run as
    one token, so only a search for the entire run found anything."""
    await _conversation(
        store,
        "s1",
        "t",
        "这个函数用Python写的，解析器在哪里？",
        "解析器はparser.pyにあります。",
        "학교에서 테스트를 실행했습니다",
    )
    assert sorted(h.message_seq for h in await search(store, "解析器")) == [0, 1]
    assert [h.message_seq for h in await search(store, "函数")] == [0]
    assert [h.message_seq for h in await search(store, "python")] == [0]  # next to Chinese
    assert [h.message_seq for h in await search(store, "あります")] == [1]
    assert [h.message_seq for h in await search(store, "학교")] == [2]  # a particle joined to it
    assert [h.message_seq for h in await search(store, '"解析器" AND parser')] == [1]
    assert await search(store, "器解") == []  # the characters in their order, not any order
    (hit,) = await search(store, "函数")
    assert hit.snippet == "这个[[函数]]用Python写的，解析器在哪里？"  # as written: no separators


async def test_a_version_6_database_finds_words_in_its_cjk_text_once_opened(
    db_path: Path, query: Query, old_database: OldDatabase
) -> None:
    await old_database(6, [])
    # messages v6 indexed: each index row's text as v6's store wrote it
    body = '{"role":"user","content":[{"type":"text","text":"解析器在哪里 where"}]}'
    query(
        "INSERT INTO messages (session_id, turn_id, seq, role, body, created_at) VALUES ('old', 't', 0, 'user', ?, 1)",
        (body,),
    )
    query("INSERT INTO messages_fts (rowid, text) SELECT id, '解析器在哪里 where' FROM messages")
    query(
        "INSERT INTO messages (session_id, turn_id, seq, role, body, created_at) VALUES ('old', 't', 1, 'assistant', ?, 1)",
        ('{"role":"assistant","text":"plain English"}',),
    )
    query("INSERT INTO messages_fts (rowid, text) SELECT id, 'plain English' FROM messages WHERE seq = 1")
    async with await HistoryStore.open(db_path) as store:
        assert [h.message_seq for h in await search(store, "解析器")] == [0]
        assert [h.message_seq for h in await search(store, "english")] == [1]
        assert [h.message_seq for h in await search(store, "where")] == [0]
    assert query("SELECT COUNT(*) FROM messages_fts") == [(2,)]
