"""`tether daemon status|stop`: the user's shared daemons, seen and stopped from a shell.

Owns: the subcommand's arguments and the text it prints. Finding the daemons, verifying
each before a signal and stopping them is `tether.shared.control`'s.
Must not: signal a process itself, or import more than the standard library and that
module at module level (`tether --help` builds this parser).
"""

from __future__ import annotations

import os
import sys

from tether.shared.control import STOP_WAIT_S, Daemon, find_daemons, stop_daemons
from tether.shared.proxy import ProxyError

TYPE_CHECKING = False  # `typing` stays out of every command's parser
if TYPE_CHECKING:
    import argparse


def add_daemon_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `daemon status|stop` to the `tether` subparsers."""
    daemon = commands.add_parser("daemon", help="the shared daemon: status, stop")
    actions = daemon.add_subparsers(dest="action", required=True, metavar="ACTION")
    status = actions.add_parser("status", help="your shared daemons: pid, windows, memory, log")
    status.add_argument("--json", action="store_true", help="one JSON object per daemon")
    actions.add_parser("stop", help="stop your shared daemons (the next window starts a fresh one)")


def daemon_main(args: argparse.Namespace) -> int:
    try:
        found = find_daemons(os.environ)
    except ProxyError as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 1
    if args.action == "status":
        return _status(found, as_json=args.json)
    return _stop(found)


def _status(found: list[Daemon], *, as_json: bool) -> int:
    if as_json:
        for daemon in found:
            print(daemon.as_json())
        return 0
    running = [d for d in found if d.running]
    if not running:
        print("no shared daemon is running (the next shared window starts one)")
    for d in running:
        windows = "?" if d.windows is None else str(d.windows)
        rss = "?" if d.rss_mb is None else f"{d.rss_mb:.0f} MB"
        mark = "  (the one this environment uses)" if d.this_environment else ""
        state = "listening" if d.listening else "stopping"
        print(f"pid {d.pid}: {state}, {windows} window(s), {rss}{mark}\n  socket {d.socket}\n  log    {d.log}")
    for d in found:
        if not d.running:
            print(f"stale pid file of a daemon that is gone: {d.socket[: -len('.sock')]}.pid")
    return 0


def _stop(found: list[Daemon]) -> int:
    running = [d for d in found if d.running and d.pid is not None]
    if not running:
        print("no shared daemon is running")
        return 0
    code = 0
    for d, stopped in stop_daemons(running):
        if stopped:
            print(f"stopped the shared daemon {d.pid}")
        else:
            print(
                f"pid {d.pid} did not stop within {STOP_WAIT_S:.0f} s: `kill -9 {d.pid}` ends it (its log: {d.log})",
                file=sys.stderr,
            )
            code = 1
    return code
