"""`tether sessions rewind` and `tether sessions changes`: checkpoints from the command line (SPEC §3.40).

Owns: these subcommands' arguments and the text they print (what was restored, what was left and why, the
undo id; exit 3 when refused); what they do is `SessionsService.rewind` / `.changes` (the daemon's path).
Must not: import more than the standard library at module level.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .sessions import NOT_FOUND, OK, USAGE, _fail, _no_session, _service, _with_store

if TYPE_CHECKING:
    import argparse

    from tether.store import HistoryStore

__all__ = ["REFUSED", "add_rewind_parsers", "changes_action", "rewind_action"]

REFUSED = 3


def add_rewind_parsers(
    actions: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    rewind = actions.add_parser(
        "rewind", parents=[common], help="take a session back to before a turn: conversation, files or both"
    )
    rewind.add_argument("session_id", metavar="ID")
    point = rewind.add_mutually_exclusive_group(required=True)
    point.add_argument("--to", type=int, metavar="TURN", help="back to just before this turn (1 = the first)")
    point.add_argument("--message", type=int, metavar="SEQ", help="back to just before this user message")
    point.add_argument("--undo", type=int, metavar="REWIND", help="undo this rewind (its id)")
    rewind.add_argument("--restore", choices=("conversation", "files", "both"), default="both")
    rewind.add_argument("--force", action="store_true", help="also overwrite files changed since Tether wrote them")
    rewind.add_argument("--dry-run", action="store_true", help="say what it would do; change nothing")
    changes = actions.add_parser("changes", parents=[common], help="the files a session's turns changed, as diffs")
    changes.add_argument("session_id", metavar="ID")
    changes.add_argument("--turn", type=int, metavar="N", help="only this turn")


async def rewind_action(args: argparse.Namespace, workspace: Path, home: Path | None) -> int:
    from tether.services.rewind import BadRewind, RewindBusy
    from tether.store import StoreError

    async def work(store: HistoryStore) -> int:
        record = await store.get_session(args.session_id)
        if record is None:
            return _no_session(args.session_id, workspace)
        try:
            outcome = await _service(store).rewind(
                store,
                record.id,
                Path(record.workspace) if Path(record.workspace).is_dir() else workspace,
                to_turn=args.to,
                message_seq=args.message,
                to_rewind=args.undo,
                restore=args.restore,
                force=args.force,
                dry_run=args.dry_run,
            )
        except BadRewind as exc:
            return _fail(str(exc), USAGE)
        except (RewindBusy, StoreError) as exc:
            return _fail(f"not rewound: {exc}", REFUSED)
        for path, diff in outcome.conflicts:
            print(f"changed since Tether wrote it: {path}", file=sys.stderr)
            sys.stderr.write(diff)
        for path, reason in outcome.skipped:
            print(f"cannot restore {path}: {reason}", file=sys.stderr)
        if not outcome.done and not args.dry_run:
            return _fail(
                f"not rewound: {len(outcome.conflicts)} file(s) changed since; --force restores them too", REFUSED
            )
        verb = "would restore" if args.dry_run else "restored"
        for path in outcome.restored:
            print(f"{verb} {path}")
        hidden = f"{outcome.hidden} message(s) out of the conversation"
        print(
            f"{hidden} (dry run: nothing changed)"
            if args.dry_run
            else f"{hidden}; undo with: tether sessions rewind {record.id} --undo {outcome.rewind_id}"
        )
        return OK

    return await _with_store(workspace, home, lambda: _no_session(args.session_id, workspace), work)


async def changes_action(args: argparse.Namespace, workspace: Path, home: Path | None) -> int:
    async def work(store: HistoryStore) -> int:
        from tether.services.rewind import BadRewind, turn_seq

        if await store.get_session(args.session_id) is None:
            return _no_session(args.session_id, workspace)
        try:
            await turn_seq(store, args.session_id, args.turn)  # an unknown turn is refused, as by the daemon
        except BadRewind as exc:
            return _fail(str(exc), USAGE)
        found = await _service(store).changes(store, args.session_id, args.turn)
        if not found:
            which = f"turn {args.turn}" if args.turn else "the session"
            print(f"no file changes recorded for {which}", file=sys.stderr)
            return NOT_FOUND
        for change in found:
            turns = ", ".join(str(t) for t in change.turns)
            print(f"{change.status} {change.path}" + (f"  (turn {turns})" if turns else ""))
            if change.note:
                print(f"    cannot be rewound: {change.note}")
            sys.stdout.write(change.diff)
        return OK

    return await _with_store(workspace, home, lambda: _no_session(args.session_id, workspace), work)
