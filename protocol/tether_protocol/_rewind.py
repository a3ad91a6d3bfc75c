"""Checkpoints and rewind: `_tether/session/rewind` and `_tether/session/changes` (SPEC §3.40).

Owns: their params and results. Must not: hold behaviour (what a rewind restores is
the daemon's `server/rewind.py`).
"""

from __future__ import annotations

from typing import Literal, Union

import attrs

from ._fields import Meta, wire

__all__ = [
    "ChangedFile", "ChangesParams", "ChangesResult", "RewindConflict", "RewindInfo", "RewindParams",
    "RewindResult", "RewindSkipped", "RewindRestore",
]

_ID = "invalid params for {method}: sessionId (a non-empty string) is required"
_CWD = "invalid params for {method}: cwd must be a string"
_TURN = "a turn's seq (an integer at least 1) or its turnId (the string session/prompt answers)"

RewindRestore = Literal["conversation", "files", "both"]


@attrs.define
class RewindParams:
    """Back to just before turn `toTurn` (its seq, 1 = the first, or its turnId) began, or just before the
    user message `messageSeq`, or just before rewind `toRewind` (which undoes it): exactly
    one of the three. `force`: also overwrite files changed since Tether last wrote them.
    `dryRun`: answer what it would do, change nothing."""

    session_id: str = wire(error=_ID, non_empty=True)
    to_turn: Union[int, str, None] = wire(
        default=None, minimum=1, error="invalid params for {method}: toTurn must be " + _TURN
    )
    message_seq: Union[int, None] = wire(
        default=None, minimum=0, error="invalid params for {method}: messageSeq must be an integer at least 0"
    )
    to_rewind: Union[int, None] = wire(
        default=None, minimum=1, error="invalid params for {method}: toRewind must be an integer at least 1"
    )
    restore: RewindRestore = wire(
        default="both",
        error='invalid params for {method}: restore must be "conversation", "files" or "both"',
    )
    force: bool = wire(default=False, error="invalid params for {method}: force must be a boolean")
    dry_run: bool = wire(default=False, error="invalid params for {method}: dryRun must be a boolean")
    cwd: Union[str, None] = wire(default=None, error=_CWD)
    meta: Meta = None


@attrs.define
class RewindConflict:
    """A file changed since Tether last wrote it (by the user or another program): not
    overwritten without `force`. `diff` goes from its current content to the one the
    rewind restores ("" for a binary file)."""

    path: str
    diff: str


@attrs.define
class RewindSkipped:
    """A file the rewind cannot restore (its content was not recorded), and why."""

    path: str
    reason: str


@attrs.define
class RewindResult:
    """`rewindId`: this rewind (undo it with `toRewind`); null when nothing was done (a
    dry run, or refused for conflicts). `restored`: the files put back (or, in a dry run,
    that would be); `conflicts`: the files left as they are (with `force`, restored too
    and listed in both); `hiddenMessages`: messages the model no longer sees."""

    rewind_id: Union[int, None]
    restored: list[str]
    conflicts: list[RewindConflict]
    skipped: list[RewindSkipped]
    hidden_messages: int
    done: bool


@attrs.define
class ChangesParams:
    """The files turn `turn` (its seq or its turnId) changed, or the whole session's when absent."""

    session_id: str = wire(error=_ID, non_empty=True)
    turn: Union[int, str, None] = wire(
        default=None, minimum=1, error="invalid params for {method}: turn must be " + _TURN
    )
    cwd: Union[str, None] = wire(default=None, error=_CWD)
    meta: Meta = None


@attrs.define
class ChangedFile:
    """One file: `status` "added" | "modified" | "deleted"; `diff` is unified ("" for
    binary); `note` says why it cannot be rewound, if it cannot. `turns`: the turns
    (seqs) that changed it; `turnIds`: the same turns' ids, in the same order."""

    path: str
    status: Literal["added", "modified", "deleted"]
    diff: str
    turns: list[int]
    note: Union[str, None] = None
    turn_ids: list[str] = attrs.Factory(list)


@attrs.define
class RewindInfo:
    """A rewind of the session: `toRewind: rewindId` undoes it. `atSeq`: the session's next
    message seq when it was made; `toSeq`: the first message it took out of the model's view."""

    rewind_id: int
    at_seq: int
    to_seq: int
    restore: RewindRestore


@attrs.define
class ChangesResult:
    """`rewinds`: every rewind of the session, oldest first (also with `turn`)."""

    files: list[ChangedFile]
    rewinds: list[RewindInfo] = attrs.Factory(list)
