"""Session snapshots, forks, search and the latest session: `_tether/session/dump`,
`_tether/session/restore`, `_tether/session/fork`, `_tether/session/search`,
`_tether/session/latest` (SPEC §3.27-§3.32), and the snapshot format (§3.28).

Owns: those params and results, and the snapshot's shape — its keys are snake_case
(the store's names), so its classes say `SNAKE_CASE = True`. Must not: check a
snapshot (`tether.store.snapshots.check_snapshot` does, with its own messages: the
`snapshot` param is taken as raw JSON and only described here).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Union

import attrs

from ._extensions import RuleDecision, RunReport
from ._fields import Meta, wire
from ._json import JsonObject

__all__ = [
    "DumpParams", "DumpResult", "DumpedFile", "LatestParams", "LatestResult", "LatestSession", "MessageRole",
    "NoLatestSession", "PendingApprovals", "PendingCall", "RestoreParams",
    "RestoreResult", "RestoredRule", "SearchHit", "SearchParams", "SearchResult",
    "Snapshot", "SnapshotMessage", "SnapshotPending", "SnapshotReport", "SnapshotRule",
    "SnapshotSession", "SnapshotTurn", "StoredMessageStatus", "TetherForkParams",
    "TurnStatus",
]

_ID = "invalid params for {method}: sessionId (a non-empty string) is required"
_CWD = "invalid params for {method}: cwd must be a string"

TurnStatus = Literal["running", "complete", "cancelled", "interrupted", "error"]
MessageRole = Literal["user", "assistant", "tool", "system"]
StoredMessageStatus = Literal["complete", "incomplete", "cancelled", "interrupted", "error"]


# ---- the snapshot format (snake_case keys) -------------------------------------------


@attrs.define
class SnapshotSession:
    SNAKE_CASE: ClassVar[bool] = True
    id: str
    workspace: str
    title: Union[str, None]
    mode: str
    created_at: float
    updated_at: float
    metadata: JsonObject = attrs.Factory(dict)


@attrs.define
class PendingCall:
    """`started`: approved and begun before the daemon stopped (not run again)."""

    SNAKE_CASE: ClassVar[bool] = True
    id: str
    name: str
    arguments: JsonObject
    started: Union[bool, None] = None


@attrs.define
class PendingApprovals:
    SNAKE_CASE: ClassVar[bool] = True
    step: int
    calls: list[PendingCall]


@attrs.define
class SnapshotTurn:
    SNAKE_CASE: ClassVar[bool] = True
    id: str
    seq: int
    status: TurnStatus
    stop_reason: Union[str, None]
    started_at: float
    finished_at: Union[float, None]
    error: Union[str, None]
    pending: Union[PendingApprovals, None] = None


@attrs.define
class SnapshotMessage:
    """`body` is the stored message (user, assistant or tool result; SPEC §3.28)."""

    SNAKE_CASE: ClassVar[bool] = True
    seq: int
    turn_id: Union[str, None]
    role: MessageRole
    status: StoredMessageStatus
    created_at: float
    body: JsonObject
    # the rewind that took it out of the model's view (SPEC §3.40)
    rewound: Union[int, None] = None


@attrs.define
class SnapshotReport:
    SNAKE_CASE: ClassVar[bool] = True
    turn_id: str
    report: RunReport


@attrs.define
class SnapshotRule:
    SNAKE_CASE: ClassVar[bool] = True
    kind: str
    pattern: str
    decision: RuleDecision


@attrs.define
class SnapshotPending:
    SNAKE_CASE: ClassVar[bool] = True
    turn_id: str
    approvals: PendingApprovals


@attrs.define
class Snapshot:
    """A session's stored records, format version 1 (`_tether/session/dump`'s result);
    `checkpoints`: the files its turns and rewinds changed (SPEC §3.40), when it has any."""

    SNAKE_CASE: ClassVar[bool] = True
    tether_snapshot: int
    session: SnapshotSession
    turns: list[SnapshotTurn]
    messages: list[SnapshotMessage]
    reports: list[SnapshotReport]
    pending: Union[SnapshotPending, None]
    exported_at: Union[float, None] = None
    rules: list[SnapshotRule] = attrs.Factory(list)
    checkpoints: Union[JsonObject, None] = None


# ---- methods -------------------------------------------------------------------------


@attrs.define
class DumpParams:
    """`_tether/session/dump`: a live session, else one stored in `cwd`'s workspace or
    the default one; with `path`, written to that new file (absolute) a page at a time,
    never held whole, and answered with `DumpedFile`."""

    session_id: str = wire(error=_ID, non_empty=True)
    cwd: Union[str, None] = wire(default=None, error=_CWD)
    path: Union[str, None] = wire(default=None, error="invalid params for {method}: path must be a string")
    meta: Meta = None


@attrs.define
class DumpedFile:
    """`_tether/session/dump` with `path`: the file written, its messages and size."""

    path: str
    messages: int
    bytes: int


DumpResult = Union[Snapshot, DumpedFile]


@attrs.define
class RestoreParams:
    """The snapshot as `snapshot`, or in the file at `path` (absolute; read a record at a
    time, never whole): exactly one of the two."""

    snapshot: Any = wire(
        default=None,
        error="invalid params for {method}: snapshot (an object from _tether/session/dump) is required",
        schema=Union[Snapshot, None],
    )
    path: Union[str, None] = wire(default=None, error="invalid params for {method}: path must be a string")
    cwd: Union[str, None] = wire(default=None, error=_CWD)
    keep_id: bool = wire(default=False, error="invalid params for {method}: keepId must be a boolean")
    import_rules: bool = wire(
        default=False, error="invalid params for {method}: importRules must be a boolean"
    )
    meta: Meta = None


@attrs.define
class RestoredRule:
    """`imported` only with `importRules`, for a known kind and a non-blank pattern."""

    kind: str
    pattern: str
    decision: RuleDecision
    imported: bool


@attrs.define
class RestoreResult:
    """The stored (not live) session: make it live with `session/load` or `/resume`."""

    session_id: str
    cwd: str
    mode: str
    rules: list[RestoredRule]


@attrs.define
class TetherForkParams:
    """`_tether/session/fork`: messages 0..`messageSeq` (all when absent or null)."""

    session_id: str = wire(error=_ID, non_empty=True)
    message_seq: Union[int, None] = wire(
        default=None, minimum=0,
        error="invalid params for {method}: messageSeq must be an integer at least 0",
    )
    cwd: Union[str, None] = wire(default=None, error=_CWD)
    meta: Meta = None


@attrs.define
class SearchParams:
    query: str = wire(
        error="invalid params for {method}: query (a non-empty string) is required", non_empty=True
    )
    cwd: Union[str, None] = wire(default=None, error=_CWD)
    limit: Union[int, None] = wire(
        default=None, minimum=1, maximum=200,
        error="invalid params for {method}: limit must be an integer between 1 and 200",
    )
    meta: Meta = None


@attrs.define
class SearchHit:
    """`rank` is SQLite's bm25 score: lower is better; `snippet` marks matches `[[…]]`."""

    session_id: str
    session_title: Union[str, None]
    message_seq: int
    role: MessageRole
    snippet: str
    rank: float


@attrs.define
class SearchResult:
    hits: list[SearchHit]


@attrs.define
class LatestParams:
    cwd: Union[str, None] = wire(default=None, error=_CWD)
    meta: Meta = None


@attrs.define
class LatestSession:
    """`title` is omitted when the session has none (never null, as in `session/list`)."""

    session_id: str
    updated_at: str
    cwd: str
    title: Union[str, None] = None


@attrs.define
class NoLatestSession:
    """`{"sessionId": null}`: the workspace has no session with a conversation."""

    session_id: None


LatestResult = Union[LatestSession, NoLatestSession]
