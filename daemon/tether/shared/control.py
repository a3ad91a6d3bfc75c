"""The user's shared daemons, seen and stopped (`tether daemon status|stop`, `tether_cli`).

Owns: finding them (the pid files beside the sockets in `proxy.runtime_dir`), telling for each
whether it runs and listens, its windows and RSS (from `/proc`), which one this shell would use,
and stopping them: SIGTERM (the daemon's orderly stop), then up to 15 s for each to exit.
Must not: signal a pid `/proc` has not shown to be this user's daemon of that socket, or start one.
"""

from __future__ import annotations

import os
import signal
import time

from .proxy import daemon_key, runtime_dir, state_dir

TYPE_CHECKING = False  # `typing`, `json` and `dataclasses` stay out of every command's parser
if TYPE_CHECKING:
    from collections.abc import Mapping

STOP_WAIT_S = 15.0


class Daemon:
    """One shared daemon, as its pid file and /proc describe it."""

    __slots__ = ("key", "pid", "socket", "running", "listening", "windows", "rss_mb", "log", "this_environment")

    def __init__(
        self,
        *,
        key: str,
        pid: int | None,
        socket: str,
        running: bool,
        listening: bool,
        windows: int | None,
        rss_mb: float | None,
        log: str,
        this_environment: bool,
    ) -> None:
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


def find_daemons(env: Mapping[str, str]) -> list[Daemon]:
    """Every shared daemon of this user with a pid file in the runtime directory."""
    directory = runtime_dir(env)
    mine = daemon_key([], env)
    sockets = _unix_sockets()
    found = []
    for name in sorted(os.listdir(directory)):
        if not (name.startswith("daemon-") and name.endswith(".pid")):
            continue
        key = name[len("daemon-") : -len(".pid")]
        socket = os.path.join(directory, f"daemon-{key}.sock")
        pid = _read_pid(os.path.join(directory, name))
        running = pid is not None and is_shared_daemon(pid, socket)
        found.append(
            Daemon(
                key=key,
                pid=pid,
                socket=socket,
                running=running,
                listening=running and (sockets is None or socket in sockets[0]),
                windows=None if sockets is None else sockets[1].get(socket, 0),
                rss_mb=_rss_mb(pid) if running and pid is not None else None,
                log=os.path.join(state_dir(env), f"shared-daemon-{key}.log"),
                this_environment=key == mine,
            )
        )
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


def stop_daemons(running: list[Daemon]) -> list[tuple[Daemon, bool]]:
    """SIGTERM to each (running, verified: `find_daemons`), then up to 15 s for them to exit;
    each with whether it did."""
    for d in running:
        assert d.pid is not None
        os.kill(d.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_WAIT_S
    stopped = []
    for d in running:
        assert d.pid is not None
        while _alive(d.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        stopped.append((d, not _alive(d.pid)))
    return stopped
