"""`tether daemon status|stop`: the user's shared daemons, seen and stopped from a shell.

Owns: finding this user's shared daemons (the pid file beside each socket in the runtime
directory, `proxy.runtime_dir`), telling for each whether it runs, listens and how many
windows it serves (from `/proc`), which one this shell's environment would use, and
stopping them: SIGTERM (the daemon's own orderly stop: socket removed, turns stopped as a
stopping daemon stops them, stores closed), then waiting for the process to exit.
Must not: signal a process it has not verified, from `/proc`, to be this user's shared
daemon for that very socket (a pid file can outlive its daemon and the pid be reused), or
start a daemon.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from .proxy import ProxyError, daemon_key, runtime_dir, state_dir

TYPE_CHECKING = False  # `typing`, `json` and `dataclasses` stay out of every command's parser
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

_STOP_WAIT_S = 15.0


class Daemon:
    """One shared daemon, as its pid file and /proc describe it."""

    __slots__ = ("key", "pid", "socket", "running", "listening", "windows", "rss_mb", "log", "this_environment")

    def __init__(self, *, key: str, pid: int | None, socket: str, running: bool, listening: bool,
                 windows: int | None, rss_mb: float | None, log: str, this_environment: bool) -> None:
        self.key = key
        self.pid = pid
        self.socket = socket
        self.running = running  # the pid is this socket's daemon, alive
        self.listening = listening  # its socket accepts connections
        self.windows = windows  # connections it serves now (None: /proc/net/unix unreadable)
        self.rss_mb = rss_mb
        self.log = log
        self.this_environment = this_environment  # the daemon a window started from this shell would use

    def as_json(self) -> str:
        import json

        return json.dumps({name: getattr(self, name) for name in self.__slots__})


def add_daemon_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `daemon status|stop` to the `tether` subparsers."""
    daemon = commands.add_parser("daemon", help="the shared daemon: status, stop")
    actions = daemon.add_subparsers(dest="action", required=True, metavar="ACTION")
    status = actions.add_parser("status", help="your shared daemons: pid, windows, memory, log")
    status.add_argument("--json", action="store_true", help="one JSON object per daemon")
    actions.add_parser("stop", help="stop your shared daemons (the next window starts a fresh one)")


def daemon_main(args: argparse.Namespace) -> int:
    env = os.environ
    try:
        found = find_daemons(env)
    except ProxyError as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 1
    if args.action == "status":
        return _status(found, as_json=args.json)
    return _stop(found)


def find_daemons(env: Mapping[str, str]) -> list[Daemon]:
    """Every shared daemon of this user with a pid file in the runtime directory."""
    directory = runtime_dir(env)
    mine = daemon_key([], env)
    sockets = _unix_sockets()
    found = []
    for name in sorted(os.listdir(directory)):
        if not (name.startswith("daemon-") and name.endswith(".pid")):
            continue
        key = name[len("daemon-"):-len(".pid")]
        socket = os.path.join(directory, f"daemon-{key}.sock")
        pid = _read_pid(os.path.join(directory, name))
        running = pid is not None and is_shared_daemon(pid, socket)
        found.append(Daemon(
            key=key, pid=pid, socket=socket, running=running,
            listening=running and (sockets is None or socket in sockets[0]),
            windows=None if sockets is None else sockets[1].get(socket, 0),
            rss_mb=_rss_mb(pid) if running and pid is not None else None,
            log=os.path.join(state_dir(env), f"shared-daemon-{key}.log"), this_environment=key == mine,
        ))
    return found


def is_shared_daemon(pid: int, socket: str) -> bool:
    """Whether `pid` is this user's `python -m tether.shared.daemon --socket <socket>`."""
    try:
        if os.stat(f"/proc/{pid}").st_uid != os.getuid():
            return False
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            argv = [os.fsdecode(word) for word in file.read().split(b"\0")]
    except OSError:
        return False
    if "tether.shared.daemon" not in argv or "--socket" not in argv:
        return False
    at = argv.index("--socket")
    return at + 1 < len(argv) and argv[at + 1] == socket and _alive(pid)


def _read_pid(path: str) -> int | None:
    try:
        with open(path) as file:
            return int(file.read().strip())
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _unix_sockets() -> tuple[set[str], dict[str, int]] | None:
    """(the listening socket paths; connected sockets per path), from /proc/net/unix: a
    daemon's accepted connections carry its socket's path."""
    try:
        with open("/proc/net/unix") as file:
            lines = file.read().splitlines()[1:]
    except OSError:
        return None
    listening: set[str] = set()
    counts: dict[str, int] = {}
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) != 8:
            continue
        if int(fields[3], 16) & 0x10000:  # __SO_ACCEPTCON: listening
            listening.add(fields[7])
        elif fields[5] == "03":  # SS_CONNECTED
            counts[fields[7]] = counts.get(fields[7], 0) + 1
    return listening, counts


def _rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as file:
            for line in file:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return None


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
            print(f"stale pid file of a daemon that is gone: {d.socket[:-len('.sock')]}.pid")
    return 0


def _stop(found: list[Daemon]) -> int:
    running = [d for d in found if d.running and d.pid is not None]
    if not running:
        print("no shared daemon is running")
        return 0
    for d in running:
        assert d.pid is not None
        os.kill(d.pid, signal.SIGTERM)
    code = 0
    deadline = time.monotonic() + _STOP_WAIT_S
    for d in running:
        assert d.pid is not None
        while _alive(d.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        if _alive(d.pid):
            print(f"pid {d.pid} did not stop within {_STOP_WAIT_S:.0f} s: `kill -9 {d.pid}` ends it "
                  f"(its log: {d.log})", file=sys.stderr)
            code = 1
        else:
            print(f"stopped the shared daemon {d.pid}")
    return code
