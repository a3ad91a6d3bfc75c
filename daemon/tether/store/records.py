"""The plain values the history store hands in and out, and their row encoding.

Owns: ``SessionRecord``, ``MessageRecord``, ``TurnRecord``, ``ChangeSet``, the role and status
sets (``tether_protocol._stored_vocabulary``'s words), the one JSON encoding of bodies, metadata
and reports (compact, UTF-8 kept as is), what of a message is searchable, turn ids and the ``list_sessions`` cursor.
Must not: touch the database or know the wire protocol (the protocol layer converts these).
"""

from __future__ import annotations

import base64
import json
import os
import re
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, get_args

from tether.store.errors import InvalidCursor
from tether_protocol import JsonObject, MessageRole, StoredMessageStatus, TurnStatus, dumps_text, loads, whole_text

if TYPE_CHECKING:  # the conversation model is imported when a message is first converted
    from collections.abc import Callable

    from tether_protocol.conversation import JsonObject, Message

__all__ = [
    "FINAL_TURN_STATUSES",
    "MESSAGE_ROLES",
    "MESSAGE_STATUSES",
    "TURN_STATUSES",
    "ChangeSet",
    "MessageRecord",
    "MessageRow",
    "MessageView",
    "SessionRecord",
    "TurnMessageView",
    "TurnRecord",
    "decode_bodies",
    "decode_json",
    "encode_json",
    "indexed_text",
    "message_row",
    "new_turn_id",
    "new_turn_ids",
    "parse_session_cursor",
    "records_of_rows",
    "searchable_text",
    "session_cursor",
    "split_cjk",
]

MESSAGE_ROLES: frozenset[str] = frozenset(get_args(MessageRole))
MESSAGE_STATUSES: frozenset[str] = frozenset(get_args(StoredMessageStatus))
TURN_STATUSES: frozenset[str] = frozenset(get_args(TurnStatus))
# what finish_turn accepts: every status except the one begin_turn sets
FINAL_TURN_STATUSES = TURN_STATUSES - {"running"}


def new_turn_ids(count: int) -> list[str]:
    """``count`` fresh turn ids, ``turn_`` and 16 random hex digits each, from one read of
    the system's random source (a restore of 2,500 turns took 7 ms with ``uuid4`` each)."""
    digits = os.urandom(8 * count).hex()
    return ["turn_" + digits[i : i + 16] for i in range(0, 16 * count, 16)]


def new_turn_id() -> str:
    return new_turn_ids(1)[0]


# Compact, UTF-8 kept as is (tether_protocol._json: orjson, the standard library where
# orjson refuses)
encode_json = dumps_text


decode_json = loads


def decode_bodies(texts: list[str]) -> list[Any]:
    """``[decode_json(t) for t in texts]`` for many stored bodies (each one JSON object, as
    the store writes them): one parse of them as one JSON array, which takes half the time
    of 10,000 small parses. Falls back to one parse each (and its error) if the texts do
    not make one value each."""
    if len(texts) > 1:
        try:
            values = loads("[" + ",".join(texts) + "]")
        except ValueError:
            pass
        else:
            if len(values) == len(texts):
                return values  # type: ignore[no-any-return]
    return [loads(text) for text in texts]


def _until_nul(text: str) -> str:
    # SQLite's JSON functions (which indexed schema v4) end a string at its first NUL
    return text[: text.index("\0")] if "\0" in text else text


def searchable_text(role: str, body: Any) -> str | None:
    """What full-text search indexes of one message; ``None`` for nothing (or only "").

    The text blocks of a user message (joined by newlines), an assistant's answer, a tool
    result's content; not thinking, tool arguments or system messages. Until schema v5 an
    SQL trigger computed this from the stored JSON; the store now computes it here while
    it has the body in hand. Same text (a test holds the two together), except that a user
    message with a content entry that is not an object is indexed instead of refused.
    """
    if not isinstance(body, dict):
        return None
    text: Any
    if role == "user":
        content = body.get("content")
        if isinstance(content, dict):
            content = list(content.values())
        elif not isinstance(content, list):
            return None
        texts = [
            _until_nul(block["text"])
            for block in content
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        ]
        text = "\n".join(texts)
    elif role == "assistant":
        text = body.get("text")
    elif role == "tool":
        text = body.get("content")
    else:
        return None
    # a lone surrogate as U+FFFD, as ``encode_json`` writes the body: SQLite refuses to
    # bind a str with one, and text made inside can carry one (a model reply a provider
    # decoded with ``json.loads``, a file name decoded with "surrogateescape")
    return (whole_text(_until_nul(text)) or None) if isinstance(text, str) else None


# Chinese and Japanese are written without spaces between words (Korean often joins
# particles to words): FTS5's unicode61 tokenizer reads a run of such characters as one
# token, so a word inside a sentence could not be found. Each is indexed as a token of
# its own, with a zero-width space (a separator to the tokenizer, invisible in a snippet)
# on either side, and a query's are split the same way (``search``), so a word is found
# as the phrase of its characters.
_CJK = (
    "[\u1100-\u11ff\u3040-\u30ff\u3100-\u318f\u31a0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]"
)
SPLIT = "\u200b"


@cache
def _cjk() -> re.Pattern[str]:
    """The pattern, compiled on first non-ASCII text (~2.5 ms: not when a store opens)."""
    return re.compile(_CJK)


def split_cjk(text: str) -> str:
    """``text`` with each Chinese, Japanese or Korean character set apart by ``SPLIT``."""
    return text if text.isascii() else _cjk().sub(f"{SPLIT}\\g<0>{SPLIT}", text)


def indexed_text(role: str, body: Any) -> str | None:
    """What the search index holds of one message: ``searchable_text``, CJK split."""
    text = searchable_text(role, body)
    return None if text is None else split_cjk(text)


@dataclass(slots=True)
class SessionRecord:
    id: str
    workspace: str
    title: str | None
    mode: str
    created_at: float
    updated_at: float
    metadata: JsonObject = field(default_factory=dict)

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> SessionRecord:
        """From ``SELECT id, workspace, title, mode, created_at, updated_at, metadata``."""
        id_, workspace, title, mode, created_at, updated_at, metadata = row
        return cls(id_, workspace, title, mode, created_at, updated_at, decode_json(metadata))


# (role, encoded body, status, created_at, searchable text or None): a message ready to insert
MessageRow = tuple[str, str, str, float, str | None, "ChangeSet | None"]

# A stored message as showing it again needs it: (role, body, status).
MessageView = tuple[str, "JsonObject", str]
# The same with the message's turn id (None: stored outside a turn) and seq, for ACP v2's message ids.
TurnMessageView = tuple[str, "JsonObject", str, "str | None", int]


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """What one tool call changed in the workspace (checkpoints, ``store/checkpoints.py``):
    rows of (path, before, after, note) with sha256 digests (None: no file), and the
    contents to store by digest. Committed with the call's result message."""

    call_id: str
    rows: tuple[tuple[str, str | None, str | None, str | None], ...]
    blobs: dict[str, bytes] = field(default_factory=dict)


@cache
def _message_codec() -> tuple[Callable[[Message], bytes], Callable[[bytes], JsonObject]]:
    """The conversation's encoder and a JSON decoder, imported on the first save (opening a
    store does not import the conversation model; an import per message costs a lookup)."""
    import msgspec

    from tether_protocol.conversation import encode_message

    return encode_message, msgspec.json.Decoder(dict[str, Any]).decode


@dataclass(slots=True)
class MessageRecord:
    """One conversation message. ``body`` is the stored JSON object; on the way in it may
    be the typed message itself (``MessageRecord.of``), serialised by the one converter
    (``tether_protocol.conversation``). A body handed in as JSON is stored as it is.

    On the way in, ``seq`` and ``turn_id`` are ignored (the store assigns them)
    and a ``created_at`` of 0.0 means "now".
    """

    role: str
    body: JsonObject | Message
    status: str = "complete"
    seq: int = -1
    turn_id: str | None = None
    created_at: float = 0.0
    changes: ChangeSet | None = None  # a tool result's: the files its call changed
    # the stored body's length in characters, set when it is encoded to be stored (the turn's
    # running context estimate reads it instead of encoding the message again)
    size: int = field(default=0, compare=False)

    @classmethod
    def of(cls, message: Message, status: str = "complete", changes: ChangeSet | None = None) -> MessageRecord:
        """The record of a typed message, to store."""
        return cls(message.role, message, status, changes=changes)

    @property
    def message(self) -> Message:
        """The typed message (``ConversationError``, a ValueError, names a bad field)."""
        from tether_protocol.conversation import message_from_json

        body = self.body
        return message_from_json(body, self.role) if isinstance(body, dict) else body

    def json_body(self) -> JsonObject:
        """The body as stored: a typed message through its Struct's encoding."""
        from tether_protocol.conversation import message_to_json

        body = self.body
        return body if isinstance(body, dict) else message_to_json(body)

    def stored(self) -> tuple[str, JsonObject]:
        """The body's stored JSON text and object (a typed message encoded once by msgspec)."""
        body = self.body
        if isinstance(body, dict):
            return encode_json(body), body
        encode, decode = _message_codec()
        raw = encode(body)
        return raw.decode(), decode(raw)

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> MessageRecord:
        """From ``SELECT role, body, status, seq, turn_id, created_at``."""
        role, body, status, seq, turn_id, created_at = row
        return cls(role, decode_json(body), status, seq, turn_id, created_at)

    def check(self) -> None:
        """Refuse values the schema's CHECK constraints would reject, with a clearer message."""
        if self.role not in MESSAGE_ROLES:
            raise ValueError(f"message role must be one of {sorted(MESSAGE_ROLES)}, not {self.role!r}")
        if self.status not in MESSAGE_STATUSES:
            raise ValueError(f"message status must be one of {sorted(MESSAGE_STATUSES)}, not {self.status!r}")
        if not isinstance(self.body, dict) and getattr(self.body, "role", None) != self.role:
            raise TypeError(f"message body must be a dict or a {self.role} message, not {type(self.body).__name__}")


@dataclass(slots=True)
class TurnRecord:
    id: str
    session_id: str
    seq: int
    status: str
    stop_reason: str | None
    started_at: float
    finished_at: float | None
    error: str | None

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> TurnRecord:
        """From ``SELECT id, session_id, seq, status, stop_reason, started_at, finished_at, error``."""
        return cls(*row)


def session_cursor(last: SessionRecord) -> str:
    """The opaque ``list_sessions`` cursor that resumes after ``last``."""
    # JSON keeps the float exact (repr round-trips); base64 keeps clients from parsing it
    raw = encode_json([last.updated_at, last.id]).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def parse_session_cursor(cursor: str) -> tuple[float, str]:
    """``(updated_at, id)`` of the last session already listed."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        updated_at, session_id = json.loads(raw)
        if not isinstance(session_id, str):
            raise TypeError("cursor id is not a string")
        return float(updated_at), session_id
    except (ValueError, TypeError) as exc:
        shown = cursor if len(cursor) <= 80 else cursor[:77] + "..."
        raise InvalidCursor(
            f"{shown!r} is not a cursor a session listing returned (pass the nextCursor of the "
            f"previous page as it is, or no cursor for the first page)"
        ) from exc


def records_of_rows(rows: list[Any]) -> list[MessageRecord]:
    """Rows of ``SELECT role, body, status, seq, turn_id, created_at`` as records, their
    bodies decoded at once."""
    bodies = decode_bodies([row[1] for row in rows])
    return [
        MessageRecord(role, body, status, seq, turn_id, created_at)
        for (role, _text, status, seq, turn_id, created_at), body in zip(rows, bodies, strict=True)
    ]


def message_row(message: MessageRecord, now: float) -> MessageRow:
    # validated and encoded here, outside the lock: a bad message fails without
    # holding up other writers or opening a transaction
    message.check()
    text, body = message.stored()
    message.size = len(text)
    return (
        message.role,
        text,
        message.status,
        message.created_at or now,
        indexed_text(message.role, body),
        message.changes,
    )
