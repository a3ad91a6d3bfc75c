"""Checkpoints and rewind: `_tether/session/rewind` and `_tether/session/changes` (SPEC §3.40).

Owns: their params and results. Must not: hold behaviour (what a rewind restores is
the daemon's `server/rewind.py`).
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import msgspec

from ._codec import Meta, NonEmpty, Wire

__all__ = [
    "ChangedFile",
    "ChangesParams",
    "ChangesResult",
    "RewindConflict",
    "RewindInfo",
    "RewindParams",
    "RewindRestore",
    "RewindResult",
    "RewindSkipped",
]

_ID = "invalid params for {method}: sessionId (a non-empty string) is required"
_CWD = "invalid params for {method}: cwd must be a string"
_TURN = "a turn's seq (an integer at least 1) or its turnId (the string session/prompt answers)"

_SEQ_ERROR = "invalid params for {method}: toTurn must be " + _TURN

RewindRestore = Literal["conversation", "files", "both"]
_TurnSeq = Annotated[int, msgspec.Meta(ge=1)]


class RewindParams(Wire):
    """Back to just before turn `toTurn` (its seq, 1 = the first, or its turnId) began, or just before the
    user message `messageSeq`, or just before rewind `toRewind` (which undoes it): exactly
    one of the three. `force`: also overwrite files changed since Tether last wrote them.
    `dryRun`: answer what it would do, change nothing."""

    WIRE_ERRORS: ClassVar[dict[str, str]] = {
        "sessionId": _ID,
        "toTurn": _SEQ_ERROR,
        "messageSeq": "invalid params for {method}: messageSeq must be an integer at least 0",
        "toRewind": "invalid params for {method}: toRewind must be an integer at least 1",
        "restore": 'invalid params for {method}: restore must be "conversation", "files" or "both"',
        "force": "invalid params for {method}: force must be a boolean",
        "dryRun": "invalid params for {method}: dryRun must be a boolean",
        "cwd": _CWD,
    }

    session_id: NonEmpty
    to_turn: _TurnSeq | str | None = None
    message_seq: Annotated[int, msgspec.Meta(ge=0)] | None = None
    to_rewind: _TurnSeq | None = None
    restore: RewindRestore = "both"
    force: bool = False
    dry_run: bool = False
    cwd: str | None = None
    meta: Meta = msgspec.field(default=None, name="_meta")


class RewindConflict(Wire):
    """A file changed since Tether last wrote it (by the user or another program): not
    overwritten without `force`. `diff` goes from its current content to the one the
    rewind restores ("" for a binary file)."""

    path: str
    diff: str


class RewindSkipped(Wire):
    """A file the rewind cannot restore (its content was not recorded), and why."""

    path: str
    reason: str


class RewindResult(Wire):
    """`rewindId`: this rewind (undo it with `toRewind`); null when nothing was done (a
    dry run, or refused for conflicts). `restored`: the files put back (or, in a dry run,
    that would be); `conflicts`: the files left as they are (with `force`, restored too
    and listed in both); `hiddenMessages`: messages the model no longer sees."""

    rewind_id: int | None
    restored: list[str]
    conflicts: list[RewindConflict]
    skipped: list[RewindSkipped]
    hidden_messages: int
    done: bool


class ChangesParams(Wire):
    """The files turn `turn` (its seq or its turnId) changed, or the whole session's when absent."""

    WIRE_ERRORS: ClassVar[dict[str, str]] = {
        "sessionId": _ID,
        "turn": "invalid params for {method}: turn must be " + _TURN,
        "cwd": _CWD,
    }

    session_id: NonEmpty
    turn: _TurnSeq | str | None = None
    cwd: str | None = None
    meta: Meta = msgspec.field(default=None, name="_meta")


class ChangedFile(Wire, kw_only=True):
    """One file: `status` "added" | "modified" | "deleted"; `diff` is unified ("" for
    binary); `note` says why it cannot be rewound, if it cannot. `turns`: the turns
    (seqs) that changed it; `turnIds`: the same turns' ids, in the same order."""

    path: str
    status: Literal["added", "modified", "deleted"]
    diff: str
    turns: list[int]
    note: str | None = None
    turn_ids: list[str]  # no default, so written when empty (keyword-only: after `note`)


class RewindInfo(Wire):
    """A rewind of the session: `toRewind: rewindId` undoes it. `atSeq`: the session's next
    message seq when it was made; `toSeq`: the first message it took out of the model's view."""

    rewind_id: int
    at_seq: int
    to_seq: int
    restore: RewindRestore


class ChangesResult(Wire):
    """`rewinds`: every rewind of the session, oldest first (also with `turn`)."""

    files: list[ChangedFile]
    rewinds: list[RewindInfo]
