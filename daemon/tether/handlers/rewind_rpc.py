"""Checkpoints on the wire: `_tether/session/rewind` and `_tether/session/changes` (SPEC §3.40).

Owns: finding the session (live, else stored in `cwd`'s or the default workspace), a turn by seq
or turnId, and mapping the sessions service's errors (bad point -32602, turn running -32010).
Must not: decide what a rewind restores (`rewind.py` does, through the sessions service) or write SQL.
"""

from __future__ import annotations

from typing import cast

from tether_protocol import (
    ChangedFile,
    ChangesParams,
    ChangesResult,
    InvalidParams,
    RewindConflict,
    RewindInfo,
    RewindParams,
    RewindRestore,
    RewindResult,
    RewindSkipped,
    SessionBusy,
)

from ..server.context import ClientConnection
from ..services.rewind import BadRewind, RewindBusy, turn_seq
from ..store import HistoryStore, StoreError
from .snapshots import _locate


async def _turn_seq(
    store: HistoryStore, session_id: str, turn: int | str | None, where: str
) -> tuple[int | None, dict[str, int]]:
    """``turn`` as its seq (`rewind.turn_seq`), an unknown one -32602 naming ``where``."""
    try:
        return await turn_seq(store, session_id, turn)
    except BadRewind as exc:
        raise InvalidParams(f"invalid params for {where}: {exc}") from exc


async def session_rewind(ctx: ClientConnection, params: RewindParams) -> RewindResult:
    store, workspace = await _locate(ctx, params.session_id, params.cwd)
    to_turn = params.to_turn  # a seq is checked by the rewind, after "a turn is running"
    if isinstance(to_turn, str):
        to_turn, _seqs = await _turn_seq(store, params.session_id, to_turn, "_tether/session/rewind: toTurn")
    try:
        outcome = await ctx.daemon.sessions.rewind(
            store, params.session_id, workspace, to_turn=to_turn, message_seq=params.message_seq,
            to_rewind=params.to_rewind, restore=params.restore, force=params.force, dry_run=params.dry_run,
        )
    except BadRewind as exc:
        raise InvalidParams(f"invalid params for _tether/session/rewind: {exc}") from exc
    except RewindBusy as exc:
        raise SessionBusy(str(exc)) from exc
    except StoreError as exc:  # a turn began meanwhile
        raise SessionBusy(f"session {params.session_id}: {exc}; rewind again once it has ended") from exc
    return RewindResult(
        rewind_id=outcome.rewind_id,
        restored=outcome.restored,
        conflicts=[RewindConflict(path, diff) for path, diff in outcome.conflicts],
        skipped=[RewindSkipped(path, reason) for path, reason in outcome.skipped],
        hidden_messages=outcome.hidden,
        done=outcome.done,
    )


async def session_changes(ctx: ClientConnection, params: ChangesParams) -> ChangesResult:
    store, _workspace = await _locate(ctx, params.session_id, params.cwd)
    turn, seqs = await _turn_seq(store, params.session_id, params.turn, "_tether/session/changes: turn")
    found = await ctx.daemon.sessions.changes(store, params.session_id, turn)
    rewinds = await ctx.daemon.sessions.rewinds(store, params.session_id)
    ids = {seq: turn_id for turn_id, seq in seqs.items()}
    return ChangesResult(
        [
            ChangedFile(path=c.path, status=c.status, diff=c.diff, turns=c.turns, note=c.note,
                        turn_ids=[ids[t] for t in c.turns if t in ids])
            for c in found
        ],
        [RewindInfo(r.id, r.at_seq, r.to_seq, cast(RewindRestore, r.restore)) for r in rewinds],
    )
