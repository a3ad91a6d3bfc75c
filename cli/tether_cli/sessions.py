"""`tether sessions`: the stored sessions of a workspace, without a daemon (SPEC §10).

Owns: the `sessions` parser and the text it prints; the work is `tether.services.sessions_service`'s.
Must not: import more than the standard library at module level (`tether sessions` and
`tether --help` build this parser), or recover turns of a store a live daemon may use.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from tether.services.sessions_service import SessionsService
    from tether.store import HistoryStore
    from tether_protocol import JsonObject

__all__ = ["add_sessions_parser", "sessions_main"]

OK, NOT_FOUND, USAGE = 0, 1, 2
_SUMMARY = 100  # characters of a tool result shown by `show`


def add_sessions_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `sessions` and its subcommands to the `tether` subparsers."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--workspace", "-w", help="workspace root (default: current directory)")
    common.add_argument("--home", help="data directory (default: the user data dir; env TETHER_HOME)")
    sessions = commands.add_parser(
        "sessions", help="list, show, dump, restore, search, delete, rewind stored sessions or show their changes"
    )
    actions = sessions.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", parents=[common], help="the workspace's sessions, newest first")
    listing.add_argument("--all", action="store_true", help="also sessions never prompted (no messages) and sub-agents' sessions")
    show = actions.add_parser("show", parents=[common], help="a session's conversation as text")
    show.add_argument("session_id", metavar="ID")
    dump = actions.add_parser("dump", parents=[common], help="a session's snapshot as JSON")
    dump.add_argument("session_id", metavar="ID")
    dump.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    restore = actions.add_parser("restore", parents=[common], help="store a snapshot as a session")
    restore.add_argument("file", metavar="FILE", help="a snapshot from `dump` (- for stdin)")
    restore.add_argument("--keep-id", action="store_true", help="keep the snapshot's session id")
    restore.add_argument("--import-rules", action="store_true", help="also add its approval rules")
    search = actions.add_parser("search", parents=[common], help="full-text search of the messages")
    search.add_argument("query", metavar="QUERY")
    search.add_argument("--limit", type=int, default=20, help="at most this many hits (1-200, default 20)")
    delete = actions.add_parser("delete", parents=[common], help="delete a session and its history")
    delete.add_argument("session_id", metavar="ID")
    from .sessions_rewind import add_rewind_parsers

    add_rewind_parsers(actions, common)


def sessions_main(args: argparse.Namespace) -> int:
    import asyncio

    workspace = Path(os.path.realpath(args.workspace or os.getcwd()))
    if args.workspace and not workspace.is_dir():
        return _fail(f"workspace {args.workspace} is not a directory", USAGE)
    home = Path(args.home) if args.home else None
    try:
        return asyncio.run(_ACTIONS[args.action](args, workspace, home))
    except KeyboardInterrupt:
        return 130


def _fail(message: str, code: int) -> int:
    print(f"tether sessions: {message}", file=sys.stderr)
    return code


async def _open(path: Path) -> HistoryStore:
    from tether.store import HistoryStore

    return await HistoryStore.open(path, recover=False)


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


async def _with_store(
    workspace: Path,
    home: Path | None,
    missing: Callable[[], int],
    work: Callable[[HistoryStore], Awaitable[int]],
) -> int:
    """Run ``work(store)`` on the workspace's existing store; ``missing()`` if it has none."""
    from tether.store import StoreError
    from tether.store.paths import stored_database

    try:
        path = stored_database(workspace, home)  # reading never creates one
        if path is None:
            return missing()
        async with await _open(path) as store:
            return await work(store)
    except StoreError as exc:
        return _fail(str(exc), NOT_FOUND)


def _no_session(session_id: str, workspace: Path) -> int:
    message = f"no session {session_id!r} in workspace {workspace} (see `tether sessions list`)"
    return _fail(message, NOT_FOUND)


# -- actions ----------------------------------------------------------------------


async def _list(args: argparse.Namespace, workspace: Path, home: Path | None) -> int:
    async def work(store: HistoryStore) -> int:
        rows: list[tuple[str, str, str, str]] = []
        cursor = None
        while True:
            page, cursor = await _service(store).list(
                workspace, cursor, limit=200, include_empty=args.all, include_children=args.all
            )
            for record in page:
                count = await store.message_count(record.id)
                rows.append((record.id, _when(record.updated_at), str(count), record.title or "(untitled)"))
            if cursor is None:
                break
        if not rows:
            print(f"no stored sessions for {workspace}", file=sys.stderr)
            return OK
        width = max(len(row[0]) for row in rows)
        print(f"{'ID':<{width}}  {'UPDATED':<16}  {'MSGS':>5}  TITLE")
        for session_id, updated, shown, title in rows:
            print(f"{session_id:<{width}}  {updated:<16}  {shown:>5}  {title}")
        return OK

    return await _with_store(workspace, home, lambda: _fail(f"no stored sessions for {workspace}", OK), work)


async def _show(args: argparse.Namespace, workspace: Path, home: Path | None) -> int:
    from tether.store import StoreError, export_session

    async def work(store: HistoryStore) -> int:
        try:
            snapshot = await export_session(store, args.session_id)
        except StoreError:
            return _no_session(args.session_id, workspace)
        print(_conversation_text(snapshot), end="")
        return OK

    return await _with_store(workspace, home, lambda: _no_session(args.session_id, workspace), work)


async def _dump(args: argparse.Namespace, workspace: Path, home: Path | None) -> int:
    from tether.store import StoreError
    from tether.store.snapshot_export import dump_to_file, write_session_json

    async def work(store: HistoryStore) -> int:
        try:  # written a page at a time, never whole (a file appears only whole)
            if args.output:
                await dump_to_file(store, args.session_id, Path(args.output), replace=True)
            else:
                out = sys.stdout.buffer
                await write_session_json(store, args.session_id, lambda text: out.write(text.encode("utf-8")))
                out.write(b"\n")
                out.flush()
        except StoreError:
            return _no_session(args.session_id, workspace)
        except OSError as exc:
            if not args.output:
                raise  # stdout's reader went away: the command's exit status says so
            return _fail(f"cannot write {args.output}: {exc.strerror or exc}", USAGE)
        return OK

    return await _with_store(workspace, home, lambda: _no_session(args.session_id, workspace), work)


class _OneStore:
    """The store the CLI opened, as the sessions service's store source."""

    def __init__(self, store: HistoryStore) -> None:
        self.store = store

    async def store_for(self, workspace: Path) -> HistoryStore:
        return self.store


def _service(store: HistoryStore) -> SessionsService:
    from tether.services.sessions_service import SessionsService

    return SessionsService(_OneStore(store))


async def _restore(args: argparse.Namespace, workspace: Path, home: Path | None) -> int:
    """A snapshot file (- for stdin) read a record at a time as it is stored, never whole."""
    try:
        source = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")  # noqa: SIM115
    except OSError as exc:
        return _fail(f"cannot read {args.file}: {exc.strerror or exc}", USAGE)
    try:
        return await _restore_from(args, source, workspace, home)
    finally:
        if source is not sys.stdin.buffer:
            source.close()


async def _restore_from(args: argparse.Namespace, source: BinaryIO, workspace: Path, home: Path | None) -> int:
    from tether.config import ConfigError, load_settings
    from tether.services.sessions_service import BadSnapshot, RestoreFailed, read_snapshot, restore_workspace
    from tether.store import StoreError, database_path
    from tether.store.snapshot_reader import SnapshotReader

    try:
        snapshot = read_snapshot(SnapshotReader(source, args.file))
    except BadSnapshot as exc:
        return _fail(f"bad snapshot {args.file}: {exc}", USAGE)
    # the snapshot's own workspace if it is here, unless one was asked for
    chosen = workspace
    workspace = restore_workspace(snapshot, workspace if args.workspace else None, lambda: chosen)
    try:  # no looser than the mode a daemon here gives a new session (as _tether/session/restore)
        limit = load_settings(workspace, env=os.environ).mode
    except ConfigError as exc:
        return _fail(str(exc), USAGE)

    async def add_rule(store: HistoryStore, kind: str, pattern: str, decision: str) -> object:
        return await store.rules.add(kind, pattern, decision)

    try:
        async with await _open(database_path(workspace, home)) as store:
            restored = await _service(store).restore(
                snapshot, workspace, mode_limit=limit, keep_id=args.keep_id,
                import_rules=args.import_rules, add_rule=add_rule,
            )
    except RestoreFailed as exc:
        return _fail(f"cannot restore {args.file}: {exc}", USAGE)
    except StoreError as exc:
        return _fail(str(exc), NOT_FOUND)
    if restored.mode != restored.requested_mode:
        print(
            f"tether sessions: the snapshot's mode {restored.requested_mode!r} is looser than {limit!r}, "
            f"the mode new sessions get in {workspace}: restored in {limit!r}",
            file=sys.stderr,
        )
    if restored.rules and not args.import_rules:
        print(
            f"tether sessions: the snapshot's {len(restored.rules)} approval rule(s) were not imported "
            f"(--import-rules adds them to {workspace})",
            file=sys.stderr,
        )
    print(restored.session_id)
    return OK


async def _search(args: argparse.Namespace, workspace: Path, home: Path | None) -> int:
    if not 1 <= args.limit <= 200:
        return _fail("--limit must be between 1 and 200", USAGE)

    def none() -> int:
        return _fail(f"no matches for {args.query!r} in {workspace}", NOT_FOUND)

    async def work(store: HistoryStore) -> int:
        hits = await _service(store).search(workspace, args.query, args.limit)
        if not hits:
            return none()
        for hit in hits:
            print(f"{hit.session_id}  #{hit.message_seq} {hit.role}  {hit.session_title or '(untitled)'}")
            print("    " + " ".join(hit.snippet.split()))
        return OK

    return await _with_store(workspace, home, none, work)


async def _delete(args: argparse.Namespace, workspace: Path, home: Path | None) -> int:
    async def work(store: HistoryStore) -> int:
        record = await store.get_session(args.session_id)
        if record is None:
            return _no_session(args.session_id, workspace)
        count = await store.message_count(record.id)
        await _service(store).delete_stored(store, record.id)
        print(f"deleted {record.id} ({record.title or '(untitled)'}, {count} messages)")
        return OK

    return await _with_store(workspace, home, lambda: _no_session(args.session_id, workspace), work)


async def _rewind(args: argparse.Namespace, workspace: Path, home: Path | None) -> int:
    from .sessions_rewind import changes_action, rewind_action

    return await (rewind_action if args.action == "rewind" else changes_action)(args, workspace, home)


_ACTIONS = {
    "rewind": _rewind,
    "changes": _rewind,
    "list": _list,
    "show": _show,
    "dump": _dump,
    "restore": _restore,
    "search": _search,
    "delete": _delete,
}


# -- the conversation as text -------------------------------------------------------


def _conversation_text(snapshot: JsonObject) -> str:
    session = snapshot["session"]
    lines = [
        f"Session {session['id']}: {session['title'] or '(untitled)'}",
        f"workspace {session['workspace']}  mode {session['mode']}  "
        f"created {_when(session['created_at'])}  updated {_when(session['updated_at'])}",
    ]
    turns = {turn["id"]: turn for turn in snapshot["turns"]}
    results = {
        m["body"].get("tool_call_id"): m["body"] for m in snapshot["messages"] if m["role"] == "tool"
    }
    current: str | None = None
    for message in snapshot["messages"]:
        if message["turn_id"] != current and message["turn_id"] in turns:
            current = message["turn_id"]
            lines += ["", _turn_header(turns[current])]
        lines += _message_lines(message, results)
    return "\n".join(lines) + "\n"


def _turn_header(turn: JsonObject) -> str:
    state = turn["status"]
    if turn.get("pending"):
        state = "waiting for approval"
    elif turn["stop_reason"] and turn["stop_reason"] != turn["status"]:
        state += f", {turn['stop_reason']}"
    header = f"--- turn {turn['seq']} ({state}) ---"
    return header + (f"\nerror: {turn['error']}" if turn["error"] else "")


def _message_lines(message: JsonObject, results: dict[object, JsonObject]) -> list[str]:
    body, role = message["body"], message["role"]
    mark = f" [{message['status']}]" if message["status"] != "complete" else ""
    lines: list[str] = []
    if role == "user":
        for block in body.get("content", []):
            if isinstance(block, dict) and block.get("type") == "text":
                lines.append(_labelled(f"user{mark}", str(block.get("text", ""))))
            elif isinstance(block, dict):
                name = block.get("uri") or block.get("name") or block.get("mimeType") or ""
                lines.append(f"user{mark}: [{block.get('type', 'block')}] {name}".rstrip())
    elif role == "assistant":
        if body.get("thinking"):
            lines.append(_labelled(f"assistant (thinking){mark}", str(body["thinking"])))
        if body.get("text"):
            lines.append(_labelled(f"assistant{mark}", str(body["text"])))
        for call in body.get("tool_calls", []):
            lines.append(_call_line(call, results.get(call.get("id"))))
    elif role == "system":
        lines.append(_labelled(f"system{mark}", str(body.get("content", body.get("text", "")))))
    return lines  # tool results are shown with their calls


def _labelled(label: str, text: str) -> str:
    first, *rest = text.split("\n")
    return "\n".join([f"{label}: {first}", *("    " + line for line in rest)])


def _call_line(call: JsonObject, result: JsonObject | None) -> str:
    arguments = json.dumps(call.get("arguments", {}), ensure_ascii=False)
    if len(arguments) > _SUMMARY:
        arguments = arguments[: _SUMMARY - 3] + "..."
    line = f"  tool {call.get('name', '?')} {arguments}"
    if result is None:
        return line + "\n    -> (no result)"
    content = str(result.get("content", ""))
    text_lines = content.splitlines()
    first = next((" ".join(t.split()) for t in text_lines if t.strip()), "")
    if len(first) > _SUMMARY:
        first = first[: _SUMMARY - 3] + "..."
    size = f" ({len(text_lines)} lines)" if len(text_lines) > 1 else ""
    outcome = "error" if result.get("is_error") else "ok"
    return f"{line}\n    -> {outcome}: {first}{size}"
