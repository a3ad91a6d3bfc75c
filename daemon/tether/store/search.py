"""Full-text search over a workspace's stored conversations (schema v4, FTS5).

Owns: the search query (bm25 ranking, ``[[ ]]``-marked snippets; a query FTS5 cannot parse is
searched as literal words) and ``matches_elsewhere``, the retrieved-memory query (any of some
words, in other sessions' user and model messages, for ``agent/memory.py`` to rank).
Must not: write anything (the store indexes messages as it writes them: docs/decisions/0015).
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.store.errors import StoreError
from tether.store.records import SPLIT, split_cjk

if TYPE_CHECKING:
    from tether.store.history import HistoryStore

__all__ = ["Hit", "Match", "any_word_query", "literal_query", "matches_elsewhere", "search"]

MAX_LIMIT = 200
_SNIPPET_TOKENS = 16

_SEARCH = """
SELECT m.session_id, s.title, m.seq, m.role,
       snippet(messages_fts, 0, '[[', ']]', '…', ?), bm25(messages_fts)
FROM messages_fts
JOIN messages AS m ON m.id = messages_fts.rowid
JOIN sessions AS s ON s.id = m.session_id
WHERE messages_fts MATCH ?
ORDER BY bm25(messages_fts), m.session_id, m.seq
LIMIT ?"""


# Highlights of characters next to each other (a CJK word, indexed a character a token)
# as one: `[[世]]\u200b\u200b[[界]]` -> `[[世界]]`
_JOINED_MARKS = re.compile(f"\\]\\]{SPLIT}*\\[\\[")


@dataclass(frozen=True, slots=True)
class Hit:
    """One matching message. ``rank`` is bm25: lower (more negative) is better."""

    session_id: str
    session_title: str | None
    message_seq: int
    role: str
    snippet: str
    rank: float


def literal_query(query: str) -> str:
    """Each whitespace-separated word as an FTS5 string, so no character is an operator."""
    return " ".join('"' + word.replace('"', '""') + '"' for word in query.split())


async def search(store: HistoryStore, query: str, *, limit: int = 20) -> list[Hit]:
    """The best ``limit`` messages matching ``query`` (FTS5 syntax; literal words if it is not valid)."""
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT}, not {limit}")
    # the index holds no NUL (text is indexed up to its first one), and FTS5 would end
    # the query there, leaving an unterminated string
    query = split_cjk(query.replace("\0", " "))
    if not query.strip():
        return []
    try:
        rows = await store.query(_SEARCH, (_SNIPPET_TOKENS, query, limit))
    except StoreError as exc:
        # an FTS5 syntax error ('unterminated string', 'no such column: foo' for "foo:bar")
        if not isinstance(exc.__cause__, sqlite3.OperationalError):
            raise
        rows = await store.query(_SEARCH, (_SNIPPET_TOKENS, literal_query(query), limit))
    return [Hit(row[0], row[1], int(row[2]), row[3], _shown(row[4]), float(row[5])) for row in rows]


def _shown(snippet: str) -> str:
    return _JOINED_MARKS.sub("", snippet).replace(SPLIT, "") if SPLIT in snippet else snippet


_ELSEWHERE = """
SELECT m.session_id, s.title, m.seq, m.role,
       snippet(messages_fts, 0, '', '', '…', ?), bm25(messages_fts), m.created_at
FROM messages_fts
JOIN messages AS m ON m.id = messages_fts.rowid
JOIN sessions AS s ON s.id = m.session_id
WHERE messages_fts MATCH ? AND m.session_id != ? AND m.role IN ('user', 'assistant')
  AND m.status = 'complete'
ORDER BY bm25(messages_fts)
LIMIT ?"""


@dataclass(frozen=True, slots=True)
class Match:
    """A message of another session matching some of the words (``rank``: bm25, lower is better)."""

    session_id: str
    session_title: str | None
    message_seq: int
    role: str
    snippet: str  # unmarked
    rank: float
    created_at: float  # seconds since the epoch


def any_word_query(words: list[str]) -> str:
    """An FTS5 query matching any of ``words`` (each a literal string, CJK split)."""
    return " OR ".join('"' + split_cjk(word).replace('"', '""') + '"' for word in words if word)


async def matches_elsewhere(
    store: HistoryStore, words: list[str], *, exclude_session: str, limit: int = 20, snippet_tokens: int = 24
) -> list[Match]:
    """The best ``limit`` user and assistant messages of sessions other than
    ``exclude_session`` that hold any of ``words``."""
    query = any_word_query([w.replace("\0", " ").strip() for w in words])
    if not query:
        return []
    rows = await store.query(_ELSEWHERE, (snippet_tokens, query, exclude_session, limit))
    return [Match(row[0], row[1], int(row[2]), row[3], _shown(row[4]), float(row[5]), float(row[6])) for row in rows]
