"""Session snapshots, forks, search and the latest session (SPEC §3.27-§3.32):
`_tether/session/dump|restore|fork|search|latest`, and the snapshot format (§3.28).

Owns: those params and results (`_codec.Wire`) and the snapshot format's one description (its
records' types and limits; snake_case keys: `_codec.Stored`). Must not: check across records
(`tether.store.snapshot_checks` does, with these classes; `snapshot` is raw JSON: `Described`).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
from msgspec import UNSET, UnsetType

from ._codec import Described, Meta, NonEmpty, Stored, Wire
from ._extensions import RuleDecision, RunReport
from ._json import JsonObject
from ._pending import PendingApprovals, PendingCall
from ._stored_vocabulary import MessageRole, StoredMessageStatus, TurnStatus

__all__ = [
    "DumpParams",
    "DumpResult",
    "DumpedFile",
    "LatestParams",
    "LatestResult",
    "LatestSession",
    "MessageRole",
    "NoLatestSession",
    "PendingApprovals",
    "PendingCall",
    "RestoreParams",
    "RestoreResult",
    "RestoredRule",
    "SearchHit",
    "SearchParams",
    "SearchResult",
    "Snapshot",
    "SnapshotMessage",
    "SnapshotPending",
    "SnapshotReport",
    "SnapshotRule",
    "SnapshotSession",
    "SnapshotTurn",
    "StoredMessageStatus",
    "TetherForkParams",
    "TurnStatus",
]

_ID = "invalid params for {method}: sessionId (a non-empty string) is required"
_CWD = "invalid params for {method}: cwd must be a string"
_PATH = "invalid params for {method}: path must be a string"


# ---- the snapshot format (snake_case keys) -------------------------------------------
# The only description of a snapshot's records: the schema is written from these classes and
# `tether.store.snapshot_checks` checks a restore's records with them (a field's type, then its
# own message). Raw JSON the store checks with its own reader is `Described`.

# A seq is at most half the JSON-safe integers (JavaScript reads exact integers up to
# 2**53 - 1): the turns and messages a restored session adds stay JSON-safe, so a client reads
# their seqs exactly and the session's own dump restores again.
_MAX_SEQ = 2**52 - 1
# Timestamps are seconds since the epoch: 1e11 is the year 5138 (and a float, unlike an
# integer over 64 bits, that SQLite stores).
_MAX_TIME = 1e11

_Seq = Annotated[int, msgspec.Meta(ge=0, le=_MAX_SEQ)]
_Time = Annotated[float, msgspec.Meta(ge=0, lt=_MAX_TIME)]  # NaN and the infinities are outside
_Id = Annotated[str, msgspec.Meta(min_length=1)]


class SnapshotSession(Stored, kw_only=True, omit_defaults=False):
    id: _Id
    workspace: str
    title: str | None = None
    mode: str
    created_at: _Time
    updated_at: _Time
    metadata: JsonObject = msgspec.field(default_factory=dict)


class SnapshotTurn(Stored, kw_only=True, omit_defaults=False):
    id: str
    seq: _Seq
    status: TurnStatus
    stop_reason: str | None = None
    started_at: _Time
    finished_at: _Time | None = None
    error: str | None = None
    # read by its Struct, `PendingApprovals.from_json`, which words its own errors
    pending: Annotated[JsonObject | None, Described(PendingApprovals | None)] = None


class SnapshotMessage(Stored, kw_only=True, omit_defaults=False):
    """`body` is the stored message (user, assistant or tool result; SPEC §3.28)."""

    seq: _Seq
    turn_id: str | None = None
    role: MessageRole
    status: StoredMessageStatus = "complete"
    created_at: _Time
    # the conversation's Structs check it, many at a time, in the same words
    # (`snapshot_checks.check_bodies`: "messages[0].body must be an object, not a list")
    body: Annotated[Any, Described(JsonObject)]
    # the rewind that took it out of the model's view (SPEC §3.40; checked with the checkpoints)
    rewound: Annotated[Any, Described(int | None)] = None


class SnapshotReport(Stored, kw_only=True):
    turn_id: str
    # a `RunReport` (`snapshot_checks` checks it as one), kept as written: keys a later
    # Tether adds are restored and dumped again
    report: Annotated[JsonObject, Described(RunReport)]


class SnapshotRule(Stored, kw_only=True):
    kind: str
    pattern: str
    decision: RuleDecision


class SnapshotPending(Stored):
    turn_id: str
    approvals: PendingApprovals


class Snapshot(Stored, omit_defaults=False):
    """A session's stored records, format version 1 (`_tether/session/dump`'s result);
    `checkpoints`: the files its turns and rewinds changed (SPEC §3.40), when it has any."""

    tether_snapshot: int
    session: SnapshotSession
    turns: list[SnapshotTurn]
    messages: list[SnapshotMessage]
    reports: list[SnapshotReport]
    pending: SnapshotPending | None
    rules: list[SnapshotRule] = msgspec.field(default_factory=list)  # (written before the two left out while unset)
    exported_at: float | UnsetType | None = UNSET
    checkpoints: JsonObject | UnsetType | None = UNSET


# ---- methods -------------------------------------------------------------------------


class DumpParams(Wire):
    """`_tether/session/dump`: a live session, else one stored in `cwd`'s workspace or
    the default one; with `path`, written to that new file (absolute) a page at a time,
    never held whole, and answered with `DumpedFile`."""

    WIRE_ERRORS: ClassVar[dict[str, str]] = {"sessionId": _ID, "cwd": _CWD, "path": _PATH}

    session_id: NonEmpty
    cwd: str | None = None
    path: str | None = None
    meta: Meta = msgspec.field(default=None, name="_meta")


class DumpedFile(Wire):
    """`_tether/session/dump` with `path`: the file written, its messages and size."""

    path: str
    messages: int
    bytes: int


DumpResult = Snapshot | DumpedFile


class RestoreParams(Wire):
    """The snapshot as `snapshot`, or in the file at `path` (absolute; read a record at a
    time, never whole): exactly one of the two."""

    WIRE_ERRORS: ClassVar[dict[str, str]] = {
        "path": _PATH,
        "cwd": _CWD,
        "keepId": "invalid params for {method}: keepId must be a boolean",
        "importRules": "invalid params for {method}: importRules must be a boolean",
    }

    # raw JSON, checked by the store with its own words (the handler says when it is missing)
    snapshot: Annotated[Any, Described(Snapshot | None)] = None
    path: str | None = None
    cwd: str | None = None
    keep_id: bool = False
    import_rules: bool = False
    meta: Meta = msgspec.field(default=None, name="_meta")


class RestoredRule(Wire):
    """`imported` only with `importRules`, for a known kind and a non-blank pattern."""

    kind: str
    pattern: str
    decision: RuleDecision
    imported: bool


class RestoreResult(Wire):
    """The stored (not live) session: make it live with `session/load` or `/resume`."""

    session_id: str
    cwd: str
    mode: str
    rules: list[RestoredRule]


class TetherForkParams(Wire):
    """`_tether/session/fork`: messages 0..`messageSeq` (all when absent or null)."""

    WIRE_ERRORS: ClassVar[dict[str, str]] = {
        "sessionId": _ID,
        "messageSeq": "invalid params for {method}: messageSeq must be an integer at least 0",
        "cwd": _CWD,
    }

    session_id: NonEmpty
    message_seq: Annotated[int, msgspec.Meta(ge=0)] | None = None
    cwd: str | None = None
    meta: Meta = msgspec.field(default=None, name="_meta")


class SearchParams(Wire):
    WIRE_ERRORS: ClassVar[dict[str, str]] = {
        "query": "invalid params for {method}: query (a non-empty string) is required",
        "cwd": _CWD,
        "limit": "invalid params for {method}: limit must be an integer between 1 and 200",
    }

    query: NonEmpty
    cwd: str | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=200)] | None = None
    meta: Meta = msgspec.field(default=None, name="_meta")


class SearchHit(Wire):
    """`rank` is SQLite's bm25 score: lower is better; `snippet` marks matches `[[…]]`."""

    session_id: str
    session_title: str | None
    message_seq: int
    role: MessageRole
    snippet: str
    rank: float


class SearchResult(Wire):
    hits: list[SearchHit]


class LatestParams(Wire):
    WIRE_ERRORS: ClassVar[dict[str, str]] = {"cwd": _CWD}

    cwd: str | None = None
    meta: Meta = msgspec.field(default=None, name="_meta")


class LatestSession(Wire):
    """`title` is omitted when the session has none (never null, as in `session/list`)."""

    session_id: str
    updated_at: str
    cwd: str
    title: str | None = None


class NoLatestSession(Wire):
    """`{"sessionId": null}`: the workspace has no session with a conversation."""

    session_id: None


LatestResult = LatestSession | NoLatestSession
